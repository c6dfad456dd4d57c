// infraplan validate serve --scenario F [--measured bench.json] [--json] [--out F] [--roofline]
// [--seed N] [--weights DIR]: the serving simulator's prediction next to the mini-engine measured
// on this machine's GPU (infraplan-bench serve), metric by metric, with errors.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/find_tool.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/serving_validation.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true, "scenario file with 'serving' and 'workload' objects (docs/serving.md)"},
    {"measured", true,
     "compare with this bench serve --json report (or a validate --out file) instead of running the GPU"},
    {"json", false, "machine-readable output: {predicted, measured, comparison}"},
    {"out", true, "also write the JSON output to this file"},
    {"seed", true, "override the workload seed (both runs)"},
    {"clock", true,
     "sustained (default where the profile has a power law: each step at the clocks the board's power limiter gives it, "
     "docs/serving.md) or tables (every step at the clock the GEMM tables refer to)"},
    {"roofline", false, "predict with the datasheet roofline instead of the GPU's calibrated profile"},
    {"weights", true,
     "bench: Hugging Face model folder (config.json + *.safetensors) instead of random weights"},
};

std::string pct(double e) {
  if (!std::isfinite(e)) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * e);
  return b;
}

}  // namespace

int cmd_validate(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::printf(
        "Usage: infraplan validate serve --scenario F [--measured bench.json] [--json] [--out F]\n\n"
        "Runs the scenario twice on the same requests: predicted by the serving simulator (simulate serve)\n"
        "and measured by the mini-engine on this machine's GPU (bench serve, through infraplan-bench), and\n"
        "prints TTFT, TPOT, inter-token and end-to-end latency (p50/p90/p99), throughput and goodput with\n"
        "the error (predicted - measured) / measured. Without a GPU it says so and exits %d; --measured\n"
        "compares with an earlier bench serve --json report instead.\n\n%s",
        kExitNoGpu, options_help(kSpec).c_str());
    return argv.empty() ? 2 : 0;
  }
  if (argv[0] != "serve") throw Error(unknown_name_message("validate mode", argv[0], {"serve"}));
  Args a(std::vector<std::string>(argv.begin() + 1, argv.end()), kSpec);
  const std::string scenario = a.require("scenario");
  auto sc = strat::load_scenario(scenario);
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  if (auto s = a.get_int("seed", 0)) setup.workload.seed = std::uint64_t(*s);

  Json measured;
  if (auto m = a.get("measured")) {
    measured = read_json_file(*m);
    // An earlier validate --out file holds the measured report under "measured".
    if (measured.is_object() && measured.contains("comparison") && measured.contains("measured"))
      measured = Json(measured["measured"]);
  } else {
    const std::string tool = find_tool("infraplan-bench");
    if (tool.empty()) {
      std::fprintf(
          stderr,
          "infraplan validate: infraplan-bench was not built (no CUDA toolkit found at configure time), "
          "so the measured half cannot run here; build with CUDA on a GPU machine, or pass --measured "
          "with an earlier bench serve --json report\n");
      return kExitNoGpu;
    }
    const std::string tmp = (std::filesystem::temp_directory_path() /
                             ("infraplan-validate-" + std::to_string(getpid()) + ".json"))
                                .string();
    std::vector<std::string> args = {"serve", "--scenario", scenario, "--json-out", tmp};
    if (auto s = a.get("seed")) args.insert(args.end(), {"--seed", *s});
    if (auto w = a.get("weights")) args.insert(args.end(), {"--weights", *w});
    const int rc = run_tool(tool, args);
    if (rc == kExitNoGpu) {
      std::fprintf(stderr, "infraplan validate: no CUDA GPU here, so nothing was measured (see above)\n");
      return kExitNoGpu;
    }
    if (rc != 0) throw Error("infraplan-bench serve failed (exit code " + std::to_string(rc) + ")");
    measured = read_json_file(tmp);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
  }
  if (!measured.is_object() || !measured.contains("metrics"))
    throw Error("the measured report has no 'metrics' object; expected bench serve --json output");

  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, a.flag("roofline"));
  sim::serve::SimOptions o;
  o.keep_requests = false;
  o.power_limited = serving_power_limited(a, *cs.cost);
  auto predicted = sim::serve::simulate_serving(setup, *cs.cost, o);
  const Json pj = predicted.metrics.to_json(false);
  const auto cmp = sim::serve::compare_serving_metrics(pj, measured["metrics"]);

  Json out = {{"scenario", sc.name},
              {"cost_model", cs.name},
              {"predicted", predicted.to_json(false)},
              {"measured", measured},
              {"comparison", sim::serve::comparisons_to_json(cmp)}};
  if (auto f = a.get("out")) write_file_atomic(*f, out.dump(2) + "\n");
  if (a.flag("json")) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  const std::string device = measured.value("device", std::string("?"));
  std::printf("%s: predicted (%s) vs measured (%s), %lld requests, seed %llu\n\n", sc.name.c_str(),
              cs.name.c_str(), device.c_str(), (long long)predicted.metrics.requests,
              (unsigned long long)setup.workload.seed);
  Table t({"metric", "predicted", "measured", "error"});
  for (const auto& c : cmp) t.add({c.metric, fmt(c.predicted, 2), fmt(c.measured, 2), pct(c.error)});
  std::printf("%s\n", t.str().c_str());
  if (measured.contains("instances") && measured["instances"].is_array() && !measured["instances"].empty() &&
      !predicted.instances.empty())
    std::printf("KV capacity: predicted %lld tokens, measured engine %lld tokens\n",
                (long long)predicted.instances[0].kv_capacity_tokens,
                (long long)measured["instances"][0].value("kv_capacity_tokens", 0LL));
  return 0;
}

}  // namespace infraplan::cli
