#pragma once
// `infraplan-bench step`: the mini-engine's step times on this GPU for a model shape with random
// weights — decode steps at given batch sizes and context (CUDA-graph replay and eager), against
// the HBM roofline of the bytes a decode step must read (weights + KV), and one prefill chunk
// against the dense bf16 peak (datasheet, and a cuBLASLt 8192³ GEMM measured in the same run).
#include <string>
#include <vector>

namespace infraplan::engine {

/// Runs the command; returns the exit code (4 without a GPU).
int step_bench_main(const std::vector<std::string>& args);

}  // namespace infraplan::engine
