#pragma once
// `infraplan-bench attention`: GPU time of the mini-engine's attention kernels in the shapes a
// serving step gives them and the calibration tables do not: prefill chunks over a cached prefix
// (one chunk, or several chunks in one launch, as a mixed step runs them), and paged decode where
// sequences share their prefix blocks (prefix caching) against the same batch with blocks of its
// own. Each case runs as in a step: L2 overwritten, then the kernel, CUDA-graph replays, median;
// the sample without the kernel is subtracted.
#include <string>
#include <vector>

namespace infraplan::engine {

/// Runs the command; returns the exit code (4 without a GPU).
int attention_bench_main(const std::vector<std::string>& args);

}  // namespace infraplan::engine
