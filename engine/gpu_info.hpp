#pragma once
// The GPU this process runs on, and the check every GPU command starts with: without a usable
// CUDA device it throws NoGpu, which infraplan-bench reports with exit code 4.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "engine/cuda_model.hpp"

namespace infraplan::engine {

/// No usable CUDA device (the message says why).
class NoGpu : public std::runtime_error {
 public:
  explicit NoGpu(const std::string& what) : std::runtime_error(what) {}
};

struct GpuInfo {
  std::string name;    ///< "NVIDIA H200"
  std::string driver;  ///< driver and runtime versions
  int sms = 0;         ///< multiprocessors
  std::int64_t memory_bytes = 0;
};

/// Device 0, or throws NoGpu naming `what` (the command) and the CUDA error.
GpuInfo require_gpu(const std::string& what);
/// KV blocks that fit in the device's free memory next to the model's workspace (weights must
/// already be allocated), leaving 1 GiB spare; blocks of o.kv_format (fp8 blocks are half the bytes).
std::int64_t kv_blocks_that_fit(const LlamaConfig& c, const CudaModelOptions& o,
                                WeightFormat f = WeightFormat::BF16);

}  // namespace infraplan::engine
