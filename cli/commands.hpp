#pragma once
// The infraplan subcommands. Each takes the words after its name and returns the exit code;
// bad input throws infraplan::Error, which main() prints and turns into exit code 2.
#include <string>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::hw {
class CostModel;
}

namespace infraplan::cli {

class Args;

using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;
  CommandFn run;
};

/// All commands, in the order `infraplan --help` lists them.
const std::vector<Command>& commands();

/// Writes `content` to `path` safely (common/output_files.hpp: checked target, mkstemp temporary
/// file in its directory, rename). A run with several outputs uses OutputFiles directly, so that
/// none is written unless all can be. Throws infraplan::Error on failure.
void write_file_atomic(const std::string& path, const std::string& content);

int cmd_models(const std::vector<std::string>& args);
int cmd_hardware(const std::vector<std::string>& args);
int cmd_memory(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
/// `calibrate --from-trace`: a profile from a torch.profiler trace, no GPU needed.
int cmd_calibrate_from_trace(const std::vector<std::string>& args);
/// `calibrate cluster`: single-GPU and communication calibration across a cluster, merged.
int cmd_calibrate_cluster(const std::vector<std::string>& args);
/// `calibrate merge`: profiles merged into one cluster profile.
int cmd_calibrate_merge(const std::vector<std::string>& args);
/// Prints what a cluster profile holds (cluster, refitted model, measured vs modelled).
void print_cluster_profile_summary(const Json& profile, const std::string& path);
int cmd_cost(const std::vector<std::string>& args);
int cmd_comm(const std::vector<std::string>& args);
int cmd_plan(const std::vector<std::string>& args);
int cmd_plan_serve(const std::vector<std::string>& args);
/// `simulate train|serve`; `simulate train` is cmd_simulate_train.
int cmd_simulate(const std::vector<std::string>& args);
int cmd_simulate_train(const std::vector<std::string>& args);
/// `simulate serve --scenario F`: the serving simulator (cli/cmd_simulate_serve.cpp).
/// `--clock` of simulate serve / validate serve: true when simulated steps follow the power limiter
/// (the default where the cost model has a power law; "sustained" without one is an error).
bool serving_power_limited(const Args& a, const hw::CostModel& cost);
int cmd_simulate_serve(const std::vector<std::string>& args);
/// `report --scenario F | --from result.json`: an HTML or Markdown report (cli/cmd_report.cpp).
int cmd_report(const std::vector<std::string>& args);
/// `bench serve|step`: the mini-engine on this machine's GPU (runs infraplan-bench).
int cmd_bench(const std::vector<std::string>& args);
/// `validate serve --scenario F`: predicted vs measured serving metrics.
int cmd_validate(const std::vector<std::string>& args);

}  // namespace infraplan::cli
