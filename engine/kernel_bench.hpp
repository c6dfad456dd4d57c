#pragma once
// `infraplan-bench kernels`: GPU time of the mini-engine's row kernels (fused add + RMSNorm,
// RoPE with the KV-cache write, SwiGLU, greedy argmax) for a model shape over 1 … 8192 rows, each
// replayed back to back from a CUDA graph as in a decode step. At small batches these kernels
// are latency-bound (one block per row), far above what their bytes cost at HBM speed; the
// result is the profile's `serving_kernels` table (docs/calibration.md), which the serving
// simulator prices them from.
#include <string>
#include <vector>

namespace infraplan::engine {

/// Runs the command; returns the exit code (4 without a GPU).
int kernel_bench_main(const std::vector<std::string>& args);

}  // namespace infraplan::engine
