// The fp8 (E4M3) KV cache's kernels on the GPU against the host: the fused RoPE + cache write
// stores exactly the host's E4M3 codes (engine/fp8_e4m3.hpp) of the values a bf16 cache gets,
// saturation included; paged decode attention and paged prefill attention over an fp8 cache equal
// a double-precision host attention over the dequantized keys and values (E4M3 value × scale), and
// with scales of 1 they equal the bf16 kernels run on the same values widened to bf16, bit for bit
// (the widening is exact and the arithmetic after it is the bf16 kernels'). Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"
#include "engine/engine_kernels.hpp"
#include "engine/fp8_e4m3.hpp"
#include "engine/llama_config.hpp"
#include "engine/paged_kv_test_support.hpp"

using namespace infraplan;
using namespace infraplan::engine;

namespace {

#define REQUIRE_GPU() \
  if (!calib::gpu_available()) GTEST_SKIP() << "no CUDA GPU"

using calib::to_device;
using calib::to_host;
using test_support::bits;
using test_support::shuffled_tables;

/// This file's random bf16 inputs (seed 77).
std::vector<std::uint16_t> random_bf16(std::size_t n, float spread, std::uint32_t id) {
  return test_support::random_bf16(n, spread, id, 77);
}

constexpr int D = kHeadDim, B = kBlockSize;

/// Random E4M3 codes over the whole finite range (NaN codes 0x7F / 0xFF left out).
std::vector<std::uint8_t> random_e4m3(std::size_t n, std::uint32_t id) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t c = std::uint8_t(weight_hash((std::uint64_t(id) << 40) ^ i) >> 56);
    if ((c & 0x7F) == 0x7F) c ^= 0x01;
    // Most codes between ±0.5 and ±4 (as cached keys and values are), a few over the whole range.
    if (i % 16 != 0) c = std::uint8_t((c & 0x80) | (0x30 + (c & 0x1F)));
    v[i] = c;
  }
  return v;
}

/// ‖a − b‖₂ / ‖b‖₂.
double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// One paged cache of `blocks` blocks, kv_heads wide, as E4M3 codes.
struct PagedFp8 {
  int blocks = 0, kv_heads = 0;
  std::vector<std::uint8_t> k, v;
  std::size_t at(int block, int kvh, int off, int d) const {
    return ((std::size_t(block) * std::size_t(kv_heads) + std::size_t(kvh)) * B + std::size_t(off)) * D +
           std::size_t(d);
  }
};

/// Host attention of one query head over keys [0, n) of a sequence (block table `table`),
/// double precision, keys and values dequantized: E4M3 value × scale.
std::vector<double> host_attention(const std::vector<float>& q, const PagedFp8& c, const int* table, int kvh,
                                   int n, float ks, float vs) {
  std::vector<double> s(static_cast<std::size_t>(n)), o(D, 0.0);
  double mx = -1e300;
  for (int t = 0; t < n; ++t) {
    double dot = 0;
    for (int d = 0; d < D; ++d)
      dot += double(q[std::size_t(d)]) * double(fp8_e4m3_value(c.k[c.at(table[t / B], kvh, t % B, d)]));
    s[std::size_t(t)] = dot * double(ks) / std::sqrt(double(D));
    mx = std::max(mx, s[std::size_t(t)]);
  }
  double sum = 0;
  for (double& x : s) sum += (x = std::exp(x - mx));
  for (int t = 0; t < n; ++t)
    for (int d = 0; d < D; ++d)
      o[std::size_t(d)] += s[std::size_t(t)] * double(fp8_e4m3_value(c.v[c.at(table[t / B], kvh, t % B, d)]));
  for (double& x : o) x *= double(vs) / sum;
  return o;
}

/// The same cache as bf16 values (each E4M3 value exactly).
std::vector<std::uint16_t> widened(const std::vector<std::uint8_t>& codes) {
  std::vector<std::uint16_t> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) out[i] = bf16_bits(fp8_e4m3_value(codes[i]));
  return out;
}

void check_decode(int heads, int kv_heads, int splits, float ks, float vs) {
  const std::vector<int> ctx = {1, 17, 64, 100, 301};
  const int batch = int(ctx.size()), width = 20, blocks = batch * width + 3;
  PagedFp8 c{blocks, kv_heads, {}, {}};
  const std::size_t elems = std::size_t(blocks) * std::size_t(kv_heads) * B * D;
  c.k = random_e4m3(elems, 1);
  c.v = random_e4m3(elems, 2);
  const auto q = random_bf16(std::size_t(batch) * std::size_t(heads) * D, 1.0f, 3);
  const auto table = shuffled_tables(batch, width, blocks, 4);
  auto dq = to_device(q);
  auto dk = to_device(c.k), dv = to_device(c.v);
  auto dkb = to_device(widened(c.k)), dvb = to_device(widened(c.v));
  auto dt = to_device(table);
  auto dctx = to_device(ctx);
  calib::DeviceBuffer<bf16> out(q.size()), out_bf16(q.size());
  calib::DeviceBuffer<float> po(std::size_t(batch) * std::size_t(heads) * std::size_t(splits) * D),
      pl(std::size_t(batch) * std::size_t(heads) * std::size_t(splits));
  calib::DecodeArgs a;
  a.q = reinterpret_cast<const bf16*>(dq.get());
  a.block_table = dt.get();
  a.context_lens = dctx.get();
  a.partial_o = po.get();
  a.partial_lse = pl.get();
  a.batch = batch;
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.max_blocks_per_seq = width;
  a.num_splits = splits;
  a.tokens_per_split = 0;
  calib::DecodeArgs a8 = a;
  a8.k_fp8 = dk.get();
  a8.v_fp8 = dv.get();
  a8.k_scale = ks;
  a8.v_scale = vs;
  a8.out = out.get();
  CALIB_CUDA(cudaMemset(out.get(), 0xFF, out.bytes()));  // NaN: every element must be written
  calib::decode_attention(a8, nullptr);
  a.k_cache = reinterpret_cast<const bf16*>(dkb.get());
  a.v_cache = reinterpret_cast<const bf16*>(dvb.get());
  a.out = out_bf16.get();
  calib::decode_attention(a, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  const auto got = bits(out);
  const auto got_bf16 = bits(out_bf16);
  double worst = 0;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) {
      const std::size_t row = (std::size_t(b) * std::size_t(heads) + std::size_t(h)) * D;
      std::vector<float> qh(D);
      for (int d = 0; d < D; ++d) qh[std::size_t(d)] = bf16_value(q[row + std::size_t(d)]);
      const auto want = host_attention(qh, c, table.data() + std::size_t(b) * width, h / (heads / kv_heads),
                                       ctx[std::size_t(b)], ks, vs);
      std::vector<double> g(D);
      for (int d = 0; d < D; ++d) g[std::size_t(d)] = bf16_value(got[row + std::size_t(d)]);
      const double e = rel_l2(g, want);
      worst = std::max(worst, e);
      // The kernel rounds the probabilities to bf16 for the tensor cores (2⁻⁹ relative) and its
      // output to bf16 (2⁻⁹): a few 10⁻³ of the row's norm; 10⁻² as the bf16 kernel's own check.
      EXPECT_LT(e, 1e-2) << "seq " << b << " head " << h << " context " << ctx[std::size_t(b)];
      if (ks == 1.0f && vs == 1.0f) {
        for (int d = 0; d < D; ++d)
          ASSERT_EQ(got[row + std::size_t(d)], got_bf16[row + std::size_t(d)])
              << "scales 1: the bf16 kernel's bits on the widened cache; seq " << b << " head " << h;
      }
    }
  std::printf("[fp8 KV decode attention] heads %d/%d splits %d scales %g/%g: max rel error vs host %.2e\n", heads,
              kv_heads, splits, double(ks), double(vs), worst);
}

void check_prefill(int heads, int kv_heads, float ks, float vs) {
  // Chunk 0 starts a sequence; chunk 1 follows a cached 33-token prefix; chunk 2 a 130-token one.
  const std::vector<int> start = {0, 33, 130}, len = {70, 150, 5};
  const int chunks = int(start.size()), width = 20, blocks = chunks * width + 1;
  PagedFp8 c{blocks, kv_heads, {}, {}};
  const std::size_t elems = std::size_t(blocks) * std::size_t(kv_heads) * B * D;
  c.k = random_e4m3(elems, 11);
  c.v = random_e4m3(elems, 12);
  std::vector<int> cu = {0}, kv;
  for (int i = 0; i < chunks; ++i) {
    cu.push_back(cu.back() + len[std::size_t(i)]);
    kv.push_back(start[std::size_t(i)] + len[std::size_t(i)]);
  }
  const int rows = cu.back();
  const auto q = random_bf16(std::size_t(rows) * std::size_t(heads) * D, 1.0f, 13);
  const auto table = shuffled_tables(chunks, width, blocks, 14);
  auto dq = to_device(q);
  auto dk = to_device(c.k), dv = to_device(c.v);
  auto dkb = to_device(widened(c.k)), dvb = to_device(widened(c.v));
  auto dt = to_device(table);
  auto dcu = to_device(cu), dstart = to_device(start), dkv = to_device(kv);
  calib::DeviceBuffer<bf16> out(q.size()), out_bf16(q.size());
  PagedPrefillArgs a;
  a.q = reinterpret_cast<const bf16*>(dq.get());
  a.cu_q = dcu.get();
  a.start = dstart.get();
  a.kv_len = dkv.get();
  a.block_table = dt.get();
  a.chunks = chunks;
  a.max_q = *std::max_element(len.begin(), len.end());
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.max_blocks_per_seq = width;
  PagedPrefillArgs a8 = a;
  a8.k_fp8 = reinterpret_cast<const fp8*>(dk.get());
  a8.v_fp8 = reinterpret_cast<const fp8*>(dv.get());
  a8.k_scale = ks;
  a8.v_scale = vs;
  a8.out = out.get();
  CALIB_CUDA(cudaMemset(out.get(), 0xFF, out.bytes()));
  paged_prefill_attention(a8, nullptr);
  a.k_cache = reinterpret_cast<const bf16*>(dkb.get());
  a.v_cache = reinterpret_cast<const bf16*>(dvb.get());
  a.out = out_bf16.get();
  a.kernel = PrefillKernel::mma_sync;  // the kernel the fp8 path widens into
  paged_prefill_attention(a, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  const auto got = bits(out);
  const auto got_bf16 = bits(out_bf16);
  double worst = 0;
  for (int i = 0; i < chunks; ++i)
    for (int r = 0; r < len[std::size_t(i)]; ++r)
      for (int h = 0; h < heads; ++h) {
        const std::size_t row = (std::size_t(cu[std::size_t(i)] + r) * std::size_t(heads) + std::size_t(h)) * D;
        std::vector<float> qh(D);
        for (int d = 0; d < D; ++d) qh[std::size_t(d)] = bf16_value(q[row + std::size_t(d)]);
        const auto want = host_attention(qh, c, table.data() + std::size_t(i) * width, h / (heads / kv_heads),
                                         start[std::size_t(i)] + r + 1, ks, vs);
        std::vector<double> g(D);
        for (int d = 0; d < D; ++d) g[std::size_t(d)] = bf16_value(got[row + std::size_t(d)]);
        const double e = rel_l2(g, want);
        worst = std::max(worst, e);
        EXPECT_LT(e, 1e-2) << "chunk " << i << " row " << r << " head " << h;
        if (ks == 1.0f && vs == 1.0f) {
          for (int d = 0; d < D; ++d)
            ASSERT_EQ(got[row + std::size_t(d)], got_bf16[row + std::size_t(d)])
                << "scales 1: the bf16 kernel's bits on the widened cache; chunk " << i << " row " << r;
        }
      }
  std::printf("[fp8 KV prefill attention] heads %d/%d scales %g/%g: %d rows, max rel error vs host %.2e\n", heads,
              kv_heads, double(ks), double(vs), rows, worst);
}

}  // namespace

TEST(KvFp8CacheWrite, StoresTheHostsE4M3OfTheBf16Cache) {
  REQUIRE_GPU();
  LlamaConfig cfg;
  cfg.layers = 1;
  cfg.hidden = 512;
  cfg.heads = 4;
  cfg.kv_heads = 2;
  cfg.ffn = 512;
  cfg.vocab = 64;
  cfg.max_seq = 256;
  const int rows = 37, H = cfg.heads, K = cfg.kv_heads, blocks = 5;
  // Keys up to ±20 with a key scale of 2⁻⁵ (saturation above 14), values with scale 0.75.
  const float ks = 0.03125f, vs = 0.75f;
  const auto qkv = random_bf16(std::size_t(rows) * std::size_t(H + 2 * K) * D, 20.0f, 21);
  std::vector<int> pos(static_cast<std::size_t>(rows)), slots(static_cast<std::size_t>(rows));
  for (int t = 0; t < rows; ++t) {
    pos[std::size_t(t)] = int(weight_hash(std::uint64_t(t) + 5) % std::uint64_t(cfg.max_seq));
    slots[std::size_t(t)] = t % 9 == 4 ? -1 : (t * 7) % (blocks * B);  // distinct slots; some rows write nothing
  }
  const std::vector<float> rope = rope_table(cfg);
  auto dqkv = to_device(qkv);
  auto dpos = to_device(pos), dslots = to_device(slots);
  calib::DeviceBuffer<float2> drope(rope.size() / 2);
  CALIB_CUDA(cudaMemcpy(drope.get(), rope.data(), rope.size() * sizeof(float), cudaMemcpyHostToDevice));
  const std::size_t cache = std::size_t(blocks) * std::size_t(K) * B * D;
  calib::DeviceBuffer<bf16> q16(std::size_t(rows) * std::size_t(H) * D), q8(q16.size()), k16(cache), v16(cache);
  calib::DeviceBuffer<std::uint8_t> k8(cache), v8(cache);
  CALIB_CUDA(cudaMemset(k16.get(), 0, k16.bytes()));
  CALIB_CUDA(cudaMemset(v16.get(), 0, v16.bytes()));
  CALIB_CUDA(cudaMemset(k8.get(), 0x7F, k8.bytes()));  // NaN where nothing is written
  CALIB_CUDA(cudaMemset(v8.get(), 0x7F, v8.bytes()));
  const bf16* x = reinterpret_cast<const bf16*>(dqkv.get());
  rope_qkv_to_cache(x, q16.get(), k16.get(), v16.get(), dpos.get(), dslots.get(), drope.get(), rows, H, K, nullptr);
  rope_qkv_to_fp8_cache(x, q8.get(), reinterpret_cast<fp8*>(k8.get()), reinterpret_cast<fp8*>(v8.get()), dpos.get(),
                        dslots.get(), drope.get(), rows, H, K, ks, vs, nullptr);
  CALIB_CUDA(cudaDeviceSynchronize());
  const auto hq16 = bits(q16);
  const auto hq8 = bits(q8);
  EXPECT_EQ(hq8, hq16) << "the rotated queries do not depend on the cache's format";
  const auto hk16 = bits(k16);
  const auto hv16 = bits(v16);
  const auto hk8 = to_host(k8), hv8 = to_host(v8);
  std::vector<bool> written(std::size_t(blocks * B), false);
  for (int s : slots)
    if (s >= 0) written[std::size_t(s)] = true;
  std::int64_t checked = 0, saturated = 0, mismatches = 0;
  for (int s = 0; s < blocks * B; ++s)
    for (int h = 0; h < K; ++h)
      for (int d = 0; d < D; ++d) {
        const std::size_t i = ((std::size_t(s / B) * std::size_t(K) + std::size_t(h)) * B + std::size_t(s % B)) * D +
                              std::size_t(d);
        if (!written[std::size_t(s)]) {
          EXPECT_EQ(hk8[i], 0x7F) << "slot " << s << " was never written";
          continue;
        }
        const std::uint8_t wk = fp8_quantize(bf16_value(hk16[i]), ks), wv = fp8_quantize(bf16_value(hv16[i]), vs);
        // Equal values (a zero's sign aside: both are zero).
        if (fp8_e4m3_value(hk8[i]) != fp8_e4m3_value(wk) || fp8_e4m3_value(hv8[i]) != fp8_e4m3_value(wv)) ++mismatches;
        if ((wk & 0x7F) == 0x7E) ++saturated;
        ++checked;
      }
  EXPECT_EQ(mismatches, 0) << "of " << checked << " cached elements";
  EXPECT_GT(saturated, 0) << "the test reaches the saturation at ±448 · scale";
  EXPECT_GT(checked, 30 * K * D);
  std::printf("[fp8 KV cache write] %lld elements of keys and values equal the host's E4M3 (%lld keys saturated)\n",
              (long long)checked, (long long)saturated);
}

TEST(KvFp8Attention, DecodeMatchesTheHost) {
  REQUIRE_GPU();
  check_decode(4, 2, 1, 1.0f, 1.0f);
  check_decode(8, 1, 4, 1.0f, 1.0f);
  check_decode(4, 4, 2, 0.125f, 3.0f);
  check_decode(8, 2, 1, 2.0f, 0.5f);
}

TEST(KvFp8Attention, PrefillMatchesTheHost) {
  REQUIRE_GPU();
  check_prefill(4, 2, 1.0f, 1.0f);
  check_prefill(8, 1, 1.0f, 1.0f);
  check_prefill(2, 2, 0.125f, 3.0f);
}
