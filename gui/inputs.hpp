#pragma once
// Inputs: the values of the planner's input form, free of Qt, and their mapping to and from a
// scenario object (docs/scenario.md). The form edits a scenario: keys it has no widget for
// (profile, seed, optimizer, serving engine keys, multi-class workloads) ride along in `base`
// untouched, so opening a scenario file and running it gives the same numbers as the CLI.
#include <cstdint>
#include <string>

#include "common/json_util.hpp"

namespace infraplan::gui {

/// Which half of the field the form describes; decides which scenario object is built.
enum class Job { Training, Serving };

struct TrainingInputs {
  int tp = 1, pp = 1, dp = 0, cp = 1, ep = 1;  ///< dp = 0: derived from the GPU count
  bool sp = false;                             ///< sequence parallelism
  int zero = 0;                                ///< ZeRO stage 0..3
  std::int64_t micro_batch = 1;                ///< sequences per micro-batch per DP rank
  std::int64_t global_batch = 0;               ///< sequences per iteration (0: dp × micro_batch)
  std::int64_t seq_len = 4096;                 ///< tokens per sequence
  std::string recompute = "none";              ///< none | selective | selective-op | full
  std::string pp_schedule = "1f1b";            ///< 1f1b | gpipe | interleaved
  std::string precision = "bf16-mixed";        ///< a strat::precision_names() entry
};

struct ServingInputs {
  int replicas = 1;
  int tp = 1;                     ///< GPUs per replica (tensor parallel)
  std::string weights = "bf16";   ///< bf16 | fp16 | fp8 | int8 | int4 | nvfp4
  std::string kv_dtype = "bf16";  ///< bf16 | fp16 | fp8 | int8 | int4
  std::int64_t batch = 64;        ///< memory view: concurrent sequences per replica
  std::int64_t context = 4096;    ///< memory view: tokens per sequence (prompt + output)
  // Workload of the serving simulation (one class of requests; log-normal lengths).
  std::int64_t requests = 200;        ///< requests to simulate
  double rate_per_s = 8;              ///< Poisson arrival rate, requests per second
  std::int64_t prompt_tokens = 1024;  ///< mean prompt length, tokens
  std::int64_t output_tokens = 256;   ///< mean output length, tokens
  double slo_ttft_ms = 1000;          ///< time-to-first-token target, ms (0 = none); goodput and the plan
  double slo_tpot_ms = 50;            ///< time-per-output-token target, ms (0 = none)
  /// True when `base` carries a workload the form cannot express (several classes, a trace):
  /// the workload fields are then ignored and the scenario's workload is used as written.
  bool workload_from_scenario = false;
};

struct Inputs {
  Job job = Job::Training;
  /// A model preset name, or a path to a Hugging Face config.json / infraplan model file.
  std::string model = "llama2-7b";
  /// Cluster preset name; nodes and GPUs per node override the preset's.
  std::string cluster = "dgx-a100-80gb";
  /// The scenario's "cluster" is not a preset (a GPU name, a file, an inline object): it is used
  /// as written while this is set, and the form shows its name, nodes and GPUs per node.
  bool cluster_from_base = false;
  int nodes = 1;
  int gpus_per_node = 8;
  TrainingInputs training;
  ServingInputs serving;
  /// The scenario the form was loaded from (null when built from scratch); keys without a
  /// widget are taken from it. Its "model" wins over `model` while `model_from_base` is set
  /// (an inline model object has no preset name to show).
  Json base;
  bool model_from_base = false;
  /// Directory that relative paths inside `base` resolve against ("" = working directory).
  std::string base_dir;
  /// The file `base` was read from ("" when none); error messages start with it.
  std::string origin;
};

/// The scenario object for `in`: `base` with the form's keys written over it; only the object
/// of the selected job ("training" or "serving" + "workload") is included, so an invalid
/// training layout never blocks a serving run.
Json to_scenario(const Inputs& in);

/// The form values of a scenario object (as read from a file; unknown keys stay in `base`).
/// Throws infraplan::Error when the object is not a scenario at all (not an object).
Inputs inputs_from_scenario(const Json& scenario, const std::string& base_dir = "");

}  // namespace infraplan::gui
