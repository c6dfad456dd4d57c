#include "engine/gpu_info.hpp"

#include <cuda_runtime.h>

namespace infraplan::engine {

GpuInfo require_gpu(const std::string& what) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    throw NoGpu(what + " needs a CUDA GPU and found none (" +
                (e != cudaSuccess ? std::string(cudaGetErrorString(e)) : std::string("0 devices")) + ")");
  cudaDeviceProp p{};
  CALIB_CUDA(cudaGetDeviceProperties(&p, 0));
  GpuInfo g;
  g.name = p.name;
  g.sms = p.multiProcessorCount;
  g.memory_bytes = std::int64_t(p.totalGlobalMem);
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  g.driver = "CUDA driver " + std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10) +
             ", runtime " + std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10) + ", sm_" +
             std::to_string(p.major) + std::to_string(p.minor);
  return g;
}

std::int64_t kv_blocks_that_fit(const LlamaConfig& c, const CudaModelOptions& o, WeightFormat f) {
  std::size_t free_b = 0, total_b = 0;
  CALIB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const std::int64_t avail = std::int64_t(free_b) - CudaModel::workspace_bytes(c, o, f) -
                             (std::int64_t(1) << 30) - CudaModel::block_bytes(c, o.kv_format);
  return avail > 0 ? avail / CudaModel::block_bytes(c, o.kv_format) : 0;
}

}  // namespace infraplan::engine
