#pragma once
// Helpers of the engine's GPU kernel tests over the paged KV cache (kv_fp8_kernels_test.cpp,
// paged_prefill_test.cpp): random bf16 inputs, shuffled block tables, a device buffer's bits.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/weight_init.hpp"

namespace infraplan::engine::test_support {

/// A bf16 device buffer's bits.
inline std::vector<std::uint16_t> bits(const calib::DeviceBuffer<bf16>& d) {
  std::vector<std::uint16_t> h(d.size());
  CALIB_CUDA(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

/// Random bf16 bits: spread · u, u uniform in [−1, 1) (weight_value of `seed`, tensor `id`).
inline std::vector<std::uint16_t> random_bf16(std::size_t n, float spread, std::uint32_t id,
                                              std::uint64_t seed) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = bf16_bits(weight_value({0.0f, spread}, seed, id, i));
  return v;
}

/// A block table of `n` sequences × `width` distinct blocks out of `blocks`, shuffled.
inline std::vector<int> shuffled_tables(int n, int width, int blocks, std::uint32_t id) {
  std::vector<int> ids(static_cast<std::size_t>(blocks));
  std::iota(ids.begin(), ids.end(), 0);
  for (std::size_t i = ids.size(); i > 1; --i)
    std::swap(ids[i - 1], ids[std::size_t(weight_hash((std::uint64_t(id) << 32) ^ i) % i)]);
  ids.resize(std::size_t(n) * std::size_t(width));
  return ids;
}

}  // namespace infraplan::engine::test_support
