#pragma once
// The serving engine's settings from a scenario's "serving" object (the keys beyond
// ServingConfig's core: engine preset, CUDA graphs, admission, scheduler, batching, prefix cache,
// chunked prefill, preemption, routing, PD disaggregation, speculative decoding, host costs,
// swap space, watermark).
// Defaults and units: docs/serving.md.
#include <string>

#include "common/json_util.hpp"
#include "simulator/engine_preset.hpp"
#include "simulator/router.hpp"
#include "simulator/scheduler.hpp"
#include "simulator/spec_decode.hpp"

namespace infraplan::sim::serve {

/// Prefill/decode disaggregation: separate pools of instances with their own TP.
struct DisaggConfig {
  bool enabled = false;
  int prefill_instances = 1, prefill_tp = 1;
  int decode_instances = 1, decode_tp = 1;
  /// KV transfers priced by the collectives model with per-instance link queueing (false), or
  /// re-timed as concurrent flows on the SimGrid fabric with max-min link sharing (true: one
  /// refinement pass, see simulate_serving).
  bool simgrid_flows = false;
  int total_gpus() const { return prefill_instances * prefill_tp + decode_instances * decode_tp; }
};

struct EngineOptions {
  SchedulerConfig sched;  ///< max_num_seqs / max_batched_tokens copied from ServingConfig
  bool prefix_cache = true;
  Routing routing = Routing::RoundRobin;
  DisaggConfig pd;
  SpecConfig spec;
  /// The engine around the model: kernels per layer, CUDA graphs, host costs, default admission
  /// (serving.engine and its override keys; sched.admission is copied from it).
  EnginePreset engine;
  double swap_space_GiB = 4;  ///< host swap space per GPU, GiB
  double watermark = 0.01;    ///< fraction of KV blocks kept free at admission
  Json to_json() const;
};

/// Parses the engine keys of `serving_raw` (the "serving" object as written); core keys are
/// ignored here (serving_from_json owns them). Throws infraplan::Error naming the field.
EngineOptions engine_options_from_json(const Json& serving_raw, const strat::ServingConfig& core,
                                       const std::string& path = "serving");

}  // namespace infraplan::sim::serve
