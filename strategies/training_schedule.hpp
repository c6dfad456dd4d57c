#pragma once
// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes
// of its micro-batches (and model chunks, for interleaved 1F1B).
//
//  - GPipe (Huang et al. 2019): all forwards, then all backwards in reverse micro-batch order.
//  - 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s runs min(p - s - 1, m) warm-up
//    forwards, then alternates one forward and one backward, then drains the remaining backwards.
//  - Interleaved 1F1B (Megatron-LM, Narayanan et al. SC'21): each stage holds v model chunks;
//    m·v virtual micro-batches, grouped p at a time per chunk; warm-up (p - s - 1)·2 + (v - 1)·p.
// With communication free and backward = 2 × forward, the idle (bubble) share of the iteration is
// (p − 1)/(m + p − 1) for GPipe and 1F1B and (p − 1)/(v·m + p − 1) for interleaved.
#include <cstdint>
#include <vector>

#include "strategies/training_config.hpp"

namespace infraplan::strat {

/// One pass a stage runs.
struct PipelineStep {
  bool forward = true;        ///< false: backward
  std::int64_t micro_batch = 0;  ///< 0-based micro-batch index
  int chunk = 0;              ///< model chunk on this stage (0 unless interleaved)
};

/// The ordered passes of stage `stage` (0-based) for `m` micro-batches, `p` stages and `v` model
/// chunks per stage (v > 1 only for interleaved).
std::vector<PipelineStep> pipeline_order(PpSchedule s, int p, int stage, std::int64_t m, int v);

/// Global layer range [first, first + count) of model chunk `chunk` on stage `stage`.
/// Interleaved: chunk c of stage s holds virtual stage c·p + s of p·v equal parts; otherwise
/// uneven splits give the first stages one more layer (layers_of_stage).
struct LayerRange {
  std::int64_t first = 0, count = 0;
};
LayerRange stage_layers(std::int64_t layers, int p, int v, int stage, int chunk);

/// Ideal bubble share of an iteration: (p − 1)/(v·m + p − 1).
double ideal_bubble_fraction(int p, std::int64_t m, int v);

}  // namespace infraplan::strat
