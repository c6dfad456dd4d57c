#pragma once
// Per-step timing of a real engine run, split into GPU time (CUDA events from the plan upload to
// the sampled ids) and host time (scheduling, block bookkeeping, plan building, token records:
// everything in a busy step period that is not GPU time and not waiting for arrivals). The host
// part is what the simulator's engine preset prices as host_overhead_us + host_us_per_seq × the
// step's sequences; host_fit() is that line fitted by least squares to a run's steps.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_text.hpp"
#include "simulator/execution_backend.hpp"

namespace infraplan::engine {

struct StepTiming {
  double start_s = 0;      ///< run clock when the backend was asked for the step
  double host_s = 0;       ///< host time of the step period, waits for arrivals excluded
  double gpu_s = 0;        ///< CUDA events around the step's GPU work
  int seqs = 0;            ///< sequences scheduled in the step
  std::int64_t tokens = 0; ///< query tokens of the step
  int prefill_seqs = 0;    ///< sequences prefilling in the step
  bool graph = false;      ///< replayed from a captured CUDA graph
  /// What the step computed (sequence pointers cleared): lets the simulator price the same step.
  std::vector<sim::serve::BatchItem> items;
  double predicted_gpu_s = -1;  ///< the simulator's GPU time for `items` (predict()), or −1
};

/// host_s ≈ intercept + slope · seqs over a set of steps.
struct HostFit {
  std::int64_t steps = 0;
  double intercept_us = 0;
  double per_seq_us = 0;
  double rmse_us = 0;      ///< residual spread of the line
  double mean_host_us = 0;
  double p10_us = 0, p50_us = 0, p90_us = 0;  ///< of host time per step
  int min_seqs = 0, max_seqs = 0;
  Json to_json() const;
};

class StepTimingLog {
 public:
  void add(const StepTiming& t) { steps_.push_back(t); }
  const std::vector<StepTiming>& steps() const { return steps_; }

  /// Least-squares line through the steps that `graph` selects (decode-only graph replays, or
  /// the eager steps). With fewer than 3 steps or a single batch size the slope is 0 and the
  /// intercept is the mean. Steps whose host time exceeds `outlier_s` (a page fault, a graph
  /// capture on first use) are left out of the fit and counted.
  HostFit host_fit(bool graph, double outlier_s = 0.05) const;

  /// Prices every recorded step with `model` (its GPU time, host work excluded: build the
  /// backend with BackendOptions::without_host()).
  void predict(sim::serve::ExecutionBackend& model);

  /// One row per step: start_s,seqs,tokens,prefill_seqs,context_tokens (summed over the batch),
  /// max_context (the longest sequence's), graph,host_us,gpu_us,
  /// predicted_gpu_us (empty before predict()).
  std::string csv() const;
  /// {"graph_steps": HostFit, "eager_steps": HostFit} and, after predict(), "step_model":
  /// predicted / measured GPU time per step kind and batch-size band (median, p10, p90).
  Json summary_json() const;

 private:
  std::vector<StepTiming> steps_;
};

}  // namespace infraplan::engine
