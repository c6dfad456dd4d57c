// Paged prefill attention on the GPU: the wgmma kernel (Hopper) against a double-precision host
// attention on sampled rows, and against the mma.sync kernel on every row, over chunks that start a
// sequence, follow a cached prefix, leave a 128-row block partly empty (1, 17, 64, 65 rows), cross
// several 128-key tiles at unaligned positions, and share KV heads (MHA, GQA 4, MQA). Skipped
// without a GPU; the wgmma case also without a 9.x GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/paged_kv_test_support.hpp"
#include "engine/paged_prefill_launchers.hpp"
#include "engine/weight_init.hpp"

using namespace infraplan;
using namespace infraplan::engine;

namespace {

constexpr int D = kHeadDim, B = kBlockSize;
using test_support::bits;
using test_support::shuffled_tables;

/// This file's random bf16 inputs (seed 91).
std::vector<std::uint16_t> random_bf16(std::size_t n, float spread, std::uint32_t id) {
  return test_support::random_bf16(n, spread, id, 91);
}

/// The engine would run the wgmma kernel here (a 9.x GPU).
bool hopper() {
  return calib::gpu_available() &&
         resolved_prefill_kernel(PrefillKernel::automatic, false) == PrefillKernel::wgmma;
}

struct Case {
  const char* name;
  int heads, kv_heads;
  std::vector<int> start, len;  // per chunk: cached tokens before it, its new tokens
};

struct Result {
  double worst_vs_host = 0, worst_vs_mma = 0;
};

Result run_case(const Case& c) {
  const int chunks = int(c.start.size());
  int width = 0;
  std::vector<int> cu = {0}, kv;
  for (int i = 0; i < chunks; ++i) {
    cu.push_back(cu.back() + c.len[std::size_t(i)]);
    kv.push_back(c.start[std::size_t(i)] + c.len[std::size_t(i)]);
    width = std::max(width, (kv.back() + B - 1) / B);
  }
  const int blocks = chunks * width + 5, rows = cu.back();
  const std::size_t elems = std::size_t(blocks) * std::size_t(c.kv_heads) * B * D;
  const auto k = random_bf16(elems, 1.0f, 1), v = random_bf16(elems, 1.0f, 2);
  const auto q = random_bf16(std::size_t(rows) * std::size_t(c.heads) * D, 4.0f, 3);
  const auto table = shuffled_tables(chunks, width, blocks, 4);
  auto dq = calib::to_device(q), dk = calib::to_device(k), dv = calib::to_device(v);
  auto dt = calib::to_device(table), dcu = calib::to_device(cu), dstart = calib::to_device(c.start),
       dkv = calib::to_device(kv);
  calib::DeviceBuffer<bf16> out_w(q.size()), out_m(q.size());
  PagedPrefillArgs a;
  a.q = reinterpret_cast<const bf16*>(dq.get());
  a.k_cache = reinterpret_cast<const bf16*>(dk.get());
  a.v_cache = reinterpret_cast<const bf16*>(dv.get());
  a.cu_q = dcu.get();
  a.start = dstart.get();
  a.kv_len = dkv.get();
  a.block_table = dt.get();
  a.chunks = chunks;
  a.max_q = *std::max_element(c.len.begin(), c.len.end());
  a.heads = c.heads;
  a.kv_heads = c.kv_heads;
  a.max_blocks_per_seq = width;
  CALIB_CUDA(cudaMemset(out_w.get(), 0xFF, out_w.bytes()));
  a.out = out_w.get();
  paged_prefill_wgmma(a, nullptr);
  a.out = out_m.get();
  a.kernel = PrefillKernel::mma_sync;
  paged_prefill_attention(a, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  const auto gw = bits(out_w), gm = bits(out_m);

  Result res;
  auto kv_at = [&](const std::vector<std::uint16_t>& cache, int chunk, int tok, int kvh, int d) {
    const int blk = table[std::size_t(chunk) * std::size_t(width) + std::size_t(tok / B)];
    return double(bf16_value(
        cache[((std::size_t(blk) * std::size_t(c.kv_heads) + std::size_t(kvh)) * B + std::size_t(tok % B)) *
                  D +
              std::size_t(d)]));
  };
  for (int i = 0; i < chunks; ++i)
    for (int r = 0; r < c.len[std::size_t(i)]; ++r)
      for (int h = 0; h < c.heads; ++h) {
        const std::size_t row =
            (std::size_t(cu[std::size_t(i)] + r) * std::size_t(c.heads) + std::size_t(h)) * D;
        double num = 0, den = 0;
        for (int d = 0; d < D; ++d) {
          const double w = bf16_value(gw[row + std::size_t(d)]), m = bf16_value(gm[row + std::size_t(d)]);
          num += (w - m) * (w - m);
          den += m * m;
        }
        res.worst_vs_mma = std::max(res.worst_vs_mma, std::sqrt(num / std::max(den, 1e-30)));
        // The host reference on a sample of rows (every 13th, and each chunk's first and last).
        if (r % 13 != 0 && r != c.len[std::size_t(i)] - 1) continue;
        const int kvh = h / (c.heads / c.kv_heads), n = c.start[std::size_t(i)] + r + 1;
        std::vector<double> s(static_cast<std::size_t>(n)), o(D, 0.0);
        double mx = -1e300;
        for (int t = 0; t < n; ++t) {
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(bf16_value(q[row + std::size_t(d)])) * kv_at(k, i, t, kvh, d);
          s[std::size_t(t)] = dot / std::sqrt(double(D));
          mx = std::max(mx, s[std::size_t(t)]);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (int t = 0; t < n; ++t)
          for (int d = 0; d < D; ++d) o[std::size_t(d)] += s[std::size_t(t)] * kv_at(v, i, t, kvh, d);
        num = den = 0;
        for (int d = 0; d < D; ++d) {
          const double want = o[std::size_t(d)] / sum, got = bf16_value(gw[row + std::size_t(d)]);
          num += (got - want) * (got - want);
          den += want * want;
        }
        res.worst_vs_host = std::max(res.worst_vs_host, std::sqrt(num / std::max(den, 1e-30)));
      }
  return res;
}

const std::vector<Case> kCases = {
    {"one 1000-row chunk from position 0, GQA 4", 8, 2, {0}, {1000}},
    {"short chunks after cached prefixes, MHA", 4, 4, {1024, 1024, 0, 3, 500, 0}, {134, 240, 64, 65, 1, 17}},
    {"a 2100-row chunk after 37 cached tokens and a 5-row one, MQA", 8, 1, {37, 260}, {2100, 5}},
};

TEST(PagedPrefillWgmma, MatchesTheHostAndTheMmaSyncKernel) {
  if (!hopper()) GTEST_SKIP() << "needs a 9.x GPU";
  for (const Case& c : kCases) {
    const Result r = run_case(c);
    std::printf("[paged prefill wgmma] %s: max rel L2 error vs host %.2e, vs mma.sync %.2e\n", c.name,
                r.worst_vs_host, r.worst_vs_mma);
    EXPECT_LT(r.worst_vs_host, 1e-2) << c.name;
    EXPECT_LT(r.worst_vs_mma, 1e-2) << c.name;
  }
}

TEST(PagedPrefillWgmma, RefusesAnFp8Cache) {
  if (!calib::gpu_available()) GTEST_SKIP() << "no CUDA GPU";
  PagedPrefillArgs a;
  a.chunks = 1;
  a.max_q = 1;
  a.heads = a.kv_heads = 1;
  const int dummy = 0;
  a.k_fp8 = reinterpret_cast<const fp8*>(&dummy);
  a.v_fp8 = reinterpret_cast<const fp8*>(&dummy);
  a.kernel = PrefillKernel::wgmma;
  EXPECT_THROW(paged_prefill_attention(a, nullptr), calib::CudaError);
}

}  // namespace
