#pragma once
// Pipeline schedules: the order in which one pipeline rank runs the forward and backward passes
// of its micro-batches (and model chunks), and the bubble each leaves as published.
//
//  - GPipe (Huang et al. 2019): all forwards, then all backwards in reverse micro-batch order.
//  - 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s runs min(p − s − 1, m) warm-up
//    forwards, then alternates one forward and one backward, then drains the remaining backwards.
//  - Interleaved 1F1B (Megatron-LM, Narayanan et al. SC'21): each stage holds v model chunks;
//    m·v virtual micro-batches, grouped p at a time per chunk; warm-up (p − s − 1)·2 + (v − 1)·p.
//  - ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023, ICLR 2024): the backward splits
//    into B (input gradient, on the critical path) and W (weight gradient, free to move). 1F1B's
//    order with stage s deferring up to s W passes; the W passes fill the cool-down bubble. Peak
//    activation memory stays 1F1B's (p micro-batches).
//  - DualPipe (DeepSeek-V3 technical report, 2024, §3.2.1): bidirectional; rank r holds model
//    stages r and p − 1 − r (pipeline_layout.hpp), half the micro-batches enter at each end. The
//    eight phases of the published schedule: warm-up forwards of the near direction, forward
//    pairs, zero-bubble B/W/F, the steady state of overlapped forward-and-backward pairs ("F&B":
//    a forward of one direction starts with a backward of the other), backward drains with the
//    second half's W passes deferred, and the W tail. Needs even p and an even m ≥ 2p.
//
// Bubbles with communication free, per micro-batch and stage: F forward, B input-gradient backward
// (the whole backward where a schedule does not split it), W weight-gradient backward:
//   GPipe, 1F1B      (p − 1)(F + B + W)                (share (p − 1)/(m + p − 1))
//   interleaved      (p − 1)(F + B + W)/v              (share (p − 1)/(v·m + p − 1))
//   ZB-H1            (p − 1)(F + B − W)                (Qi et al. §3.1, for W ≤ F)
//   DualPipe         (p/2 − 1)(F&B + B_full − 3W)      (DeepSeek-V3 Table 2; F&B = F + B + W here,
//                                                       B_full = B + W, F/B/W of one chunk)
#include <cstdint>
#include <vector>

#include "strategies/pipeline_layout.hpp"
#include "strategies/training_config.hpp"

namespace infraplan::strat {

/// Which part of a backward pass a step runs.
enum class BackwardPart {
  Full,    ///< input and weight gradients together
  Input,   ///< B: input gradient only (its weight gradient runs in a later W step)
  Weight,  ///< W: the weight gradient of an earlier B step
};

/// One pass a stage runs.
struct PipelineStep {
  bool forward = true;           ///< false: backward (see part)
  std::int64_t micro_batch = 0;  ///< 0-based micro-batch index
  int chunk = 0;                 ///< slot on this rank (pipeline_layout.hpp; 0 unless interleaved/DualPipe)
  BackwardPart part = BackwardPart::Full;
  /// DualPipe F&B pair: this forward starts together with the backward that follows it (it waits
  /// for that backward's input as well).
  bool paired = false;
};

/// The ordered passes of stage `stage` (0-based) for `m` micro-batches and `p` stages; `v` model
/// chunks per stage for the interleaved schedule (ignored otherwise).
std::vector<PipelineStep> pipeline_order(PpSchedule s, int p, int stage, std::int64_t m, int v);

/// Ideal bubble share of an iteration for GPipe / 1F1B / interleaved: (p − 1)/(v·m + p − 1).
double ideal_bubble_fraction(int p, std::int64_t m, int v);

/// Per micro-batch times of one stage (one model chunk for DualPipe), seconds.
struct PassTimes {
  double f = 0;  ///< forward
  double b = 0;  ///< backward, input gradient
  double w = 0;  ///< backward, weight gradient
};
/// Published idle time of the schedule per iteration (the table above), seconds. For the
/// interleaved schedule `t` is one stage's whole time (all v chunks) and the result divides by v.
double schedule_bubble_seconds(PpSchedule s, int p, int v, const PassTimes& t);
/// Activation in flight on stage `stage` at its peak, in micro-batches through the whole stage
/// (all its chunks): GPipe m; 1F1B min(p − s, m); interleaved Megatron-LM's 1F1B × (1 + (p − 1 −
/// s)/(p·v)); ZB-H1 min(p, m) (stage s holds p − s micro-batches plus s awaiting W; Qi et al.
/// bound the peak by 1F1B's p); DualPipe (p + 1) chunk micro-batches (DeepSeek-V3 Table 2) of
/// the rank's two chunks, i.e. (p + 1)/2 through both.
double schedule_inflight_microbatches(PpSchedule s, int p, int stage, std::int64_t m, int v);

}  // namespace infraplan::strat
