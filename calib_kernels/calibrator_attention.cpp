// The calibrator's attention tables: prefill (FlashAttention-style, own and cuDNN/SDPA-shaped) and
// paged decode, per shape, with their records.
#include "calib_kernels/calibrator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <tuple>

#include "calib_kernels/calibrator_detail.hpp"
#include "calib_kernels/gemm_layouts.hpp"
#include "calib_kernels/kernels.hpp"
#include "calib_kernels/rng.hpp"
#include "calib_kernels/timing.hpp"

namespace infraplan::calib {

using namespace calibrator_detail;

void Calibrator::attention_prefill_tables() {
  cudaStream_t s = stream_.get();
  const int heads = 32, kvh = 8;
  std::vector<std::int64_t> seqs = opt_.quick ? pow2(256, 8192) : pow2(128, 32768);
  std::vector<std::int64_t> batches =
      opt_.quick ? std::vector<std::int64_t>{1, 8} : std::vector<std::int64_t>{1, 4, 16, 64};
  const std::int64_t max_tokens = 65536;
  std::size_t qe = std::size_t(max_tokens) * heads * 128, ke = std::size_t(max_tokens) * kvh * 128;
  DeviceBuffer<bf16> q(qe), k(ke), v(ke), o(qe);
  fill_random(q.get(), qe, Elem::BF16, opt_.seed + 5, 1.f, s);
  fill_random(k.get(), ke, Elem::BF16, opt_.seed + 6, 1.f, s);
  fill_random(v.get(), ke, Elem::BF16, opt_.seed + 7, 1.f, s);
  DeviceBuffer<int> cu(4097);
  auto run = [&](int d, const std::vector<int>& lens) {
    std::vector<int> hc = {0};
    for (int l : lens) hc.push_back(hc.back() + l);
    CALIB_CUDA(cudaMemcpy(cu.get(), hc.data(), hc.size() * sizeof(int), cudaMemcpyHostToDevice));
    PrefillArgs a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.o = o.get();
    a.cu_seqlens = cu.get();
    a.num_seqs = int(lens.size());
    a.max_seqlen = *std::max_element(lens.begin(), lens.end());
    a.heads = heads;
    a.kv_heads = kvh;
    a.head_dim = d;
    a.causal = true;
    TimingOptions topt;
    topt.min_iters = 3;
    topt.budget_ms = 30;
    return time_median_seconds([&](int) { attention_prefill(a, s); }, s, topt);
  };
  json tables = json::array();
  for (int d : {64, 128}) {
    json secs = json::array();
    for (std::int64_t S : seqs) {
      json row = json::array();
      for (std::int64_t b : batches) {
        if (S * b > max_tokens) {
          row.push_back(nullptr);
          continue;
        }
        double t = run(d, std::vector<int>(std::size_t(b), int(S)));
        row.push_back(t);
        if ((S == 8192 && b == 4 && d == 128) || (S == 8192 && b == 8 && d == 128) ||
            (S == 4096 && b == 16)) {
          double f = causal_flops(double(b), heads, double(S), d, true);
          add({"attention_prefill_own", "attention", cat("b", b, " S", S, " h32/8 d", d), t, f / t / 1e12,
               "TFLOP/s", 300, "target"});
        }
      }
      secs.push_back(row);
    }
    tables.push_back({{"kernel", "own_fa2"},
                      {"causal", true},
                      {"head_dim", d},
                      {"heads", heads},
                      {"kv_heads", kvh},
                      {"seq_len", seqs},
                      {"batch", batches},
                      {"seconds", secs}});
  }
  profile_["tables"]["attention_prefill"] = tables;
  // Held out: off-grid lengths and batches, uniform lengths (what the table describes).
  Rng rng{opt_.seed ^ 0xa77e};
  json ho = json::array();
  int nh = opt_.quick ? 4 : 16;
  for (int i = 0; i < nh; ++i) {
    int d = (i % 2) ? 128 : 64;
    std::int64_t S = rng.log_int(double(seqs.front()) * 1.2, double(seqs.back()) * 0.9);
    std::int64_t bmax = std::max<std::int64_t>(1, std::min<std::int64_t>(batches.back(), max_tokens / S));
    std::int64_t b = rng.log_int(1, double(bmax));
    double t = run(d, std::vector<int>(std::size_t(b), int(S)));
    ho.push_back({{"head_dim", d},
                  {"heads", heads},
                  {"kv_heads", kvh},
                  {"batch", b},
                  {"seq_len", S},
                  {"causal", true},
                  {"seconds", t}});
  }
  profile_["holdout"]["attention_prefill"] = ho;
  // Variable lengths in one batch (reported, not tabled).
  std::vector<int> mixed = {8192, 4096, 2048, 1000, 300, 17, 6000, 3000};
  double t = run(128, mixed);
  double f = 0;
  for (int l : mixed) f += causal_flops(1, heads, l, 128, true);
  add({"attention_prefill_own_varlen", "attention", "8 seqs 17..8192 d128", t, f / t / 1e12, "TFLOP/s", 300,
       "target"});
}

void Calibrator::attention_decode_tables() {
  cudaStream_t s = stream_.get();
  const int heads = 32, kvh = 8, D = 128, BS = 16;
  std::vector<std::int64_t> batches = opt_.quick ? std::vector<std::int64_t>{1, 8, 64} : pow2(1, 256);
  std::vector<std::int64_t> ctxs = opt_.quick ? std::vector<std::int64_t>{512, 4096} : pow2(256, 32768);
  std::int64_t max_tok = 0;
  for (auto b : batches)
    for (auto c : ctxs) max_tok = std::max(max_tok, b * c);
  std::int64_t pool_tokens = max_tok + (std::int64_t(64) << 10) * 4;  // headroom for rotation of small cases
  std::int64_t pool_blocks = pool_tokens / BS;
  std::size_t ce = std::size_t(pool_blocks) * kvh * BS * D;
  DeviceBuffer<bf16> kc(ce), vc(ce);
  fill_random(kc.get(), ce, Elem::BF16, opt_.seed + 8, 1.f, s);
  fill_random(vc.get(), ce, Elem::BF16, opt_.seed + 9, 1.f, s);
  std::int64_t maxb = batches.back();
  DeviceBuffer<bf16> q(std::size_t(std::max<std::int64_t>(maxb, 256)) * heads * D), out(q.size());
  fill_random(q.get(), q.size(), Elem::BF16, opt_.seed + 10, 1.f, s);
  DeviceBuffer<float> po(std::size_t(256) * heads * 64 * D), pl(std::size_t(256) * heads * 64);
  double l2 = prop_.l2CacheSize;
  auto run = [&](const std::vector<int>& ctx, double* kv_bytes) {
    int B = int(ctx.size());
    int maxc = *std::max_element(ctx.begin(), ctx.end());
    std::int64_t tok = 0;
    for (int c : ctx) tok += c;
    *kv_bytes = double(tok) * kvh * D * 2 * 2;
    int mbps = (maxc + BS - 1) / BS;
    std::int64_t used_blocks = 0;
    for (int c : ctx) used_blocks += (c + BS - 1) / BS;
    int copies = std::max(
        1, int(std::min<std::int64_t>(rotation_copies(*kv_bytes, l2, 64), pool_blocks / used_blocks)));
    // Block tables: copy c uses its own region of the pool, blocks shuffled inside it.
    std::vector<int> tables(std::size_t(copies) * B * mbps, 0);
    Rng rng{std::uint64_t(B) * 7919 + std::uint64_t(maxc)};
    for (int c = 0; c < copies; ++c) {
      std::vector<int> ids(static_cast<std::size_t>(used_blocks));
      std::iota(ids.begin(), ids.end(), int(c * used_blocks));
      rng.shuffle(ids);
      std::size_t u = 0;
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < (ctx[b] + BS - 1) / BS; ++j)
          tables[(std::size_t(c) * B + b) * mbps + j] = ids[u++];
    }
    DeviceBuffer<int> dt(tables.size()), dc(ctx.size());
    CALIB_CUDA(cudaMemcpy(dt.get(), tables.data(), tables.size() * sizeof(int), cudaMemcpyHostToDevice));
    CALIB_CUDA(cudaMemcpy(dc.get(), ctx.data(), ctx.size() * sizeof(int), cudaMemcpyHostToDevice));
    DecodeArgs a;
    a.q = q.get();
    a.k_cache = kc.get();
    a.v_cache = vc.get();
    a.context_lens = dc.get();
    a.out = out.get();
    a.partial_o = po.get();
    a.partial_lse = pl.get();
    a.batch = B;
    a.heads = heads;
    a.kv_heads = kvh;
    a.max_blocks_per_seq = mbps;
    choose_decode_splits(a, ctx, prop_.multiProcessorCount);  // at most 64 splits: fits po, pl
    TimingOptions topt;
    topt.budget_ms = 20;
    return time_median_seconds(
        [&](int i) {
          DecodeArgs ai = a;
          ai.block_table = dt.get() + std::size_t(i % copies) * B * mbps;
          decode_attention(ai, s);
        },
        s, topt);
  };
  json secs = json::array();
  for (auto b : batches) {
    json row = json::array();
    for (auto c : ctxs) {
      double kvb = 0;
      double t = run(std::vector<int>(std::size_t(b), int(c)), &kvb);
      row.push_back(t);
      if ((b == 32 || b == 64 || b == 128) && (c == 2048 || c == 4096 || c == 8192))
        add({"decode_attention_own", "attention", cat("b", b, " ctx", c, " h32/8 d128"), t, kvb / t / 1e9,
             "GB/s", copy_GBps_, "copy"});
    }
    secs.push_back(row);
  }
  profile_["tables"]["attention_decode"] = {{"kernel", "own_paged_decode"},
                                            {"heads", heads},
                                            {"kv_heads", kvh},
                                            {"head_dim", D},
                                            {"block_size", BS},
                                            {"kv_dtype", "bf16"},
                                            {"batch", batches},
                                            {"context", ctxs},
                                            {"seconds", secs}};
  Rng rng{opt_.seed ^ 0xdec0};
  json ho = json::array();
  int nh = opt_.quick ? 4 : 16;
  for (int i = 0; i < nh; ++i) {
    int b = int(rng.log_int(double(batches.front()) + 0.6, double(batches.back()) * 0.9));
    int c = int(rng.log_int(double(ctxs.front()) * 1.2, double(ctxs.back()) * 0.9));
    double kvb = 0;
    double t = run(std::vector<int>(std::size_t(b), c), &kvb);
    ho.push_back(
        {{"batch", b}, {"context", c}, {"heads", heads}, {"kv_heads", kvh}, {"head_dim", D}, {"seconds", t}});
  }
  profile_["holdout"]["attention_decode"] = ho;
  // Mixed context lengths (reported).
  std::vector<int> mixed;
  for (int i = 0; i < 64; ++i) mixed.push_back(256 + (i * 977) % 8000);
  double kvb = 0;
  double t = run(mixed, &kvb);
  add({"decode_attention_own_mixed", "attention", "b64 ctx 256..8k h32/8 d128", t, kvb / t / 1e9, "GB/s",
       copy_GBps_, "copy"});
}

}  // namespace infraplan::calib
