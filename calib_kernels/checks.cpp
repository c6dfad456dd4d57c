#include "calib_kernels/checks.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>

#include "calib_kernels/cublas_gemm.hpp"
#include "calib_kernels/cuda_util.hpp"
#include "calib_kernels/kernels.hpp"

namespace infraplan::calib {
namespace {

template <class T>
DeviceBuffer<T> random_buffer(std::size_t n, Elem e, std::uint64_t seed, float scale = 1.f) {
  DeviceBuffer<T> d(n);
  fill_random(d.get(), n, e, seed, scale, nullptr);
  return d;
}

std::vector<double> as_double(const std::vector<bf16>& v) {
  std::vector<double> o(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) o[i] = __bfloat162float(v[i]);
  return o;
}
std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

/// ‖a − b‖ / ‖b‖; NaN anywhere gives infinity.
double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

void poison(void* p, std::size_t bytes) { CALIB_CUDA(cudaMemset(p, 0xff, bytes)); }  // NaN for floats

/// Host reference of one attention row: softmax(q·kⱼ · scale) over keys j < n, then the weighted
/// sum of the values into out[0, D). key(j) / value(j) give key and value j's D elements.
template <class Key, class Value>
void attend_ref(const double* q, int n, int D, double scale, Key key, Value value, double* out) {
  std::vector<double> w(std::size_t(std::max(n, 0)));
  double m = -INFINITY;
  for (int j = 0; j < n; ++j) {
    const double* k = key(j);
    double d = 0;
    for (int c = 0; c < D; ++c) d += q[c] * k[c];
    w[j] = d * scale;
    m = std::max(m, w[j]);
  }
  double den = 0;
  for (double& x : w) den += (x = std::exp(x - m));
  for (int c = 0; c < D; ++c) {
    double acc = 0;
    for (int j = 0; j < n; ++j) acc += w[j] * value(j)[c];
    out[c] = acc / den;
  }
}

struct Acc {
  CheckResult r;
  std::ostringstream sizes;
  Acc(std::string name, double tol) {
    r.name = std::move(name);
    r.tolerance = tol;
    r.ok = true;
  }
  void add(double err, const std::string& size) {
    r.max_rel_err = std::max(r.max_rel_err, err);
    if (!(err <= r.tolerance) && r.ok) {
      r.ok = false;
      r.detail = "failed at " + size + " (rel err " + std::to_string(err) + ")";
    }
    sizes << size << " ";
  }
  CheckResult done() {
    if (r.ok) r.detail = sizes.str();
    return r;
  }
};

CheckResult check_copy(std::uint64_t seed) {
  Acc a("copy", 0);
  for (std::size_t n4 :
       {std::size_t(1), std::size_t(1001), std::size_t(1) << 20, (std::size_t(1) << 22) + 7}) {
    auto in = random_buffer<float>(n4 * 4, Elem::F32, seed++);
    DeviceBuffer<float> out(n4 * 4);
    poison(out.get(), out.bytes());
    copy_kernel(reinterpret_cast<const float4*>(in.get()), reinterpret_cast<float4*>(out.get()), n4, nullptr);
    a.add(to_host(in) == to_host(out) ? 0.0 : 1.0, std::to_string(n4 * 4));
  }
  return a.done();
}

/// The random fill's two distributions: over 2²⁰ values, the mean within 0.01 of 0, the standard
/// deviation within 1% of 1/√3 (uniform in ±1) or 1 (normal), every value inside [-1, 1) or ±6,
/// and for the normal fill the share beyond 2σ within 0.3 points of 4.55%. Error: the worst of
/// those deviations over its bound (a pass is ≤ 1).
CheckResult check_fill(std::uint64_t seed, FillDistribution dist) {
  Acc a(std::string("fill_") + fill_distribution_name(dist), 1.0);
  const bool normal = dist == FillDistribution::Normal;
  for (std::size_t n : {std::size_t(1) << 20, (std::size_t(1) << 20) + 3}) {
    DeviceBuffer<float> d(n);
    fill_random(d.get(), n, Elem::F32, seed++, 1.f, nullptr, dist);
    const auto h = to_host(d);
    double sum = 0, sq = 0, tail = 0;
    bool outside = false;
    for (float v : h) {
      sum += v;
      sq += double(v) * v;
      tail += std::fabs(v) > 2.0 ? 1 : 0;
      outside |= normal ? std::fabs(v) > 6.0f : (v < -1.0f || v >= 1.0f);
    }
    const double mean = sum / double(n), sd = std::sqrt(std::max(0.0, sq / double(n) - mean * mean));
    const double want_sd = normal ? 1.0 : 1.0 / std::sqrt(3.0);
    double err = std::max(std::fabs(mean) / 0.01, std::fabs(sd / want_sd - 1.0) / 0.01);
    if (outside) err = std::max(err, 2.0);
    if (normal) err = std::max(err, std::fabs(tail / double(n) - 0.0455) / 0.003);
    a.add(err, std::to_string(n));
  }
  return a.done();
}

CheckResult check_reduce(std::uint64_t seed, int which) {
  const char* names[] = {"reduce_atomic", "reduce_smem_tree", "reduce_warp_shuffle"};
  Acc a(names[which], 2e-6);
  for (std::size_t n :
       {std::size_t(1), std::size_t(7), std::size_t(1000), std::size_t(1) << 20, std::size_t(12345677)}) {
    auto x = random_buffer<float>(n, Elem::F32, seed++);
    DeviceBuffer<float> out(1);
    if (which == 0) reduce_atomic(x.get(), n, out.get(), nullptr);
    if (which == 1) reduce_smem_tree(x.get(), n, out.get(), nullptr);
    if (which == 2) reduce_warp_shuffle(x.get(), n, out.get(), nullptr);
    auto h = to_host(x);
    double ref = 0, mag = 0;
    for (float v : h) {
      ref += v;
      mag += std::fabs(v);
    }
    float got = to_host(out)[0];
    a.add(std::fabs(got - ref) / (mag > 0 ? mag : 1), std::to_string(n));
  }
  return a.done();
}

CheckResult check_transpose(std::uint64_t seed, bool padded) {
  Acc a(padded ? "transpose_padded" : "transpose", 0);
  for (auto [r, c] : {std::pair{1, 1}, std::pair{33, 65}, std::pair{1000, 1001}, std::pair{1024, 512}}) {
    auto in = random_buffer<float>(std::size_t(r) * c, Elem::F32, seed++);
    DeviceBuffer<float> out(std::size_t(r) * c);
    poison(out.get(), out.bytes());
    transpose32(in.get(), out.get(), r, c, padded, nullptr);
    auto hi = to_host(in), ho = to_host(out);
    bool ok = true;
    for (int i = 0; i < r && ok; ++i)
      for (int j = 0; j < c; ++j)
        if (ho[std::size_t(j) * r + i] != hi[std::size_t(i) * c + j]) {
          ok = false;
          break;
        }
    a.add(ok ? 0 : 1, std::to_string(r) + "x" + std::to_string(c));
  }
  return a.done();
}

CheckResult check_softmax(std::uint64_t seed, bool online) {
  Acc a(online ? "softmax_online" : "softmax_naive", 1e-5);
  for (int cols : {1, 100, 1023, 4096, 10001}) {
    int rows = 7;
    auto x = random_buffer<float>(std::size_t(rows) * cols, Elem::F32, seed++, 8.f);
    DeviceBuffer<float> y(x.size());
    poison(y.get(), y.bytes());
    if (online)
      softmax_online(x.get(), y.get(), rows, cols, nullptr);
    else
      softmax_naive(x.get(), y.get(), rows, cols, nullptr);
    auto hx = to_host(x);
    std::vector<double> ref(hx.size());
    for (int i = 0; i < rows; ++i) {
      double m = -INFINITY, s = 0;
      for (int j = 0; j < cols; ++j) m = std::max(m, double(hx[std::size_t(i) * cols + j]));
      for (int j = 0; j < cols; ++j) s += std::exp(hx[std::size_t(i) * cols + j] - m);
      for (int j = 0; j < cols; ++j)
        ref[std::size_t(i) * cols + j] = std::exp(hx[std::size_t(i) * cols + j] - m) / s;
    }
    a.add(rel_err(as_double(to_host(y)), ref), std::to_string(rows) + "x" + std::to_string(cols));
  }
  return a.done();
}

std::vector<double> gemm_ref(const std::vector<double>& A, const std::vector<double>& B, int M, int N,
                             int K) {
  std::vector<double> C(std::size_t(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += A[std::size_t(i) * K + k] * B[std::size_t(j) * K + k];
      C[std::size_t(i) * N + j] = s;
    }
  return C;
}

CheckResult check_own_gemm(std::uint64_t seed, bool mma) {
  Acc a(mma ? "gemm_mma" : "gemm_tiled", 1e-2);
  std::vector<std::array<int, 3>> shapes = {{1, 8, 16}, {127, 129, 72}, {333, 250, 520}, {256, 512, 256}};
  if (!mma) shapes.push_back({100, 37, 51});
  for (auto [M, N, K] : shapes) {
    auto A = random_buffer<bf16>(std::size_t(M) * K, Elem::BF16, seed++);
    auto B = random_buffer<bf16>(std::size_t(N) * K, Elem::BF16, seed++);
    DeviceBuffer<bf16> C(std::size_t(M) * N);
    poison(C.get(), C.bytes());
    if (mma)
      gemm_mma(A.get(), B.get(), C.get(), M, N, K, nullptr);
    else
      gemm_tiled(A.get(), B.get(), C.get(), M, N, K, nullptr);
    auto ref = gemm_ref(as_double(to_host(A)), as_double(to_host(B)), M, N, K);
    a.add(rel_err(as_double(to_host(C)), ref),
          std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K));
  }
  return a.done();
}

// Every tile configuration of gemm_wgmma and its shape-picking launcher, against one reference per
// shape: odd and even sizes, K below one 64-wide k-tile and above the ring depth, and a shape with
// more tiles than a persistent grid (each CTA then walks several tiles through the same ring).
CheckResult check_wgmma(std::uint64_t seed) {
  Acc a("gemm_wgmma", 1e-2);
  std::vector<std::array<int, 3>> shapes = {
      {1, 8, 16}, {127, 129, 72}, {333, 250, 520}, {256, 512, 256}, {2000, 2100, 72}};
  for (auto [M, N, K] : shapes) {
    auto A = random_buffer<bf16>(std::size_t(M) * K, Elem::BF16, seed++);
    auto B = random_buffer<bf16>(std::size_t(N) * K, Elem::BF16, seed++);
    DeviceBuffer<bf16> C(std::size_t(M) * N);
    auto ref = gemm_ref(as_double(to_host(A)), as_double(to_host(B)), M, N, K);
    std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    for (int cfg = -1; cfg < gemm_wgmma_config_count(); ++cfg) {
      poison(C.get(), C.bytes());
      if (cfg < 0)
        gemm_wgmma(A.get(), B.get(), C.get(), M, N, K, nullptr);
      else
        gemm_wgmma_config(cfg, A.get(), B.get(), C.get(), M, N, K, nullptr);
      a.add(rel_err(as_double(to_host(C)), ref),
            size + (cfg < 0 ? std::string() : std::string("[") + gemm_wgmma_config_name(cfg) + "]"));
    }
  }
  return a.done();
}

double decode_elem(const void* p, std::size_t i, GemmDtype d) {
  switch (d) {
    case GemmDtype::BF16:
      return __bfloat162float(static_cast<const bf16*>(p)[i]);
    case GemmDtype::FP16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case GemmDtype::TF32:
      return static_cast<const float*>(p)[i];
    case GemmDtype::FP8:
      return float(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    case GemmDtype::INT8:
      return static_cast<const std::int8_t*>(p)[i];
  }
  return 0;
}

double decode_out(const void* p, std::size_t i, GemmDtype d) {
  switch (d) {
    case GemmDtype::BF16:
    case GemmDtype::FP8:
      return __bfloat162float(static_cast<const bf16*>(p)[i]);
    case GemmDtype::FP16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case GemmDtype::TF32:
      return static_cast<const float*>(p)[i];
    case GemmDtype::INT8:
      return static_cast<const std::int32_t*>(p)[i];
  }
  return 0;
}

CheckResult check_cublas(std::uint64_t seed, GemmDtype d) {
  double tol = d == GemmDtype::INT8 ? 0 : (d == GemmDtype::TF32 ? 2e-3 : 1e-2);
  Acc a(std::string("cublaslt_") + gemm_dtype_name(d), tol);
  LtHandle h;
  // fp8 needs N (the output's leading dimension in cuBLAS's view) a multiple of 16; odd M and K elsewhere.
  std::vector<std::array<int, 3>> shapes = {{1, 64, 64}, {257, 129, 96}, {128, 256, 512}, {77, 33, 48}};
  if (d == GemmDtype::FP8) shapes = {{1, 64, 64}, {257, 128, 96}, {128, 256, 512}, {77, 48, 48}};
  for (auto [M, N, K] : shapes) {
    LtPlan plan(h, d, M, N, K);
    std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    if (!plan.ok()) {
      a.add(INFINITY, size + "(no algorithm)");
      continue;
    }
    std::int64_t ld = gemm_ld(d, K);
    std::size_t ib = std::size_t(gemm_in_bytes(d)), ob = std::size_t(gemm_out_bytes(d));
    DeviceBuffer<unsigned char> X(std::size_t(M) * ld * ib), W(std::size_t(N) * ld * ib),
        Y(std::size_t(M) * plan.ldy() * ob);
    fill_gemm_operand(X.get(), std::size_t(M) * ld, d, seed++, nullptr);
    fill_gemm_operand(W.get(), std::size_t(N) * ld, d, seed++, nullptr);
    poison(Y.get(), Y.bytes());
    plan.run(X.get(), W.get(), Y.get(), nullptr);
    auto hx = to_host(X), hw = to_host(W), hy = to_host(Y);
    std::vector<double> xa(std::size_t(M) * K), wa(std::size_t(N) * K), got(std::size_t(M) * N);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k)
        xa[std::size_t(i) * K + k] = decode_elem(hx.data(), std::size_t(i) * ld + k, d);
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k)
        wa[std::size_t(j) * K + k] = decode_elem(hw.data(), std::size_t(j) * ld + k, d);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        got[std::size_t(i) * N + j] = decode_out(hy.data(), std::size_t(i) * plan.ldy() + j, d);
    a.add(rel_err(got, gemm_ref(xa, wa, M, N, K)), size);
  }
  return a.done();
}

CheckResult check_prefill(std::uint64_t seed, int head_dim, bool causal) {
  Acc a("attention_prefill_d" + std::to_string(head_dim) + (causal ? "_causal" : ""), 1e-2);
  std::vector<int> lens = {1, 17, 64, 100, 257, 383};
  int heads = 4, kvh = 2, D = head_dim;
  std::vector<int> cu = {0};
  for (int l : lens) cu.push_back(cu.back() + l);
  int T = cu.back();
  auto q = random_buffer<bf16>(std::size_t(T) * heads * D, Elem::BF16, seed++);
  auto k = random_buffer<bf16>(std::size_t(T) * kvh * D, Elem::BF16, seed++);
  auto v = random_buffer<bf16>(std::size_t(T) * kvh * D, Elem::BF16, seed++);
  DeviceBuffer<bf16> o(std::size_t(T) * heads * D);
  DeviceBuffer<int> dcu(cu.size());
  CALIB_CUDA(cudaMemcpy(dcu.get(), cu.data(), cu.size() * sizeof(int), cudaMemcpyHostToDevice));
  poison(o.get(), o.bytes());
  PrefillArgs p;
  p.q = q.get();
  p.k = k.get();
  p.v = v.get();
  p.o = o.get();
  p.cu_seqlens = dcu.get();
  p.num_seqs = int(lens.size());
  p.max_seqlen = *std::max_element(lens.begin(), lens.end());
  p.heads = heads;
  p.kv_heads = kvh;
  p.head_dim = D;
  p.causal = causal;
  attention_prefill(p, nullptr);
  auto hq = as_double(to_host(q)), hk = as_double(to_host(k)), hv = as_double(to_host(v));
  std::vector<double> ref(std::size_t(T) * heads * D);
  double sc = 1.0 / std::sqrt(double(D));
  for (std::size_t s = 0; s < lens.size(); ++s)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < lens[s]; ++i) {
        const int g = h / (heads / kvh);
        auto kv_row = [&](const std::vector<double>& t) {
          return [&, g](int j) { return &t[(std::size_t(cu[s] + j) * kvh + g) * D]; };
        };
        attend_ref(&hq[(std::size_t(cu[s] + i) * heads + h) * D], causal ? i + 1 : lens[s], D, sc, kv_row(hk),
                   kv_row(hv), &ref[(std::size_t(cu[s] + i) * heads + h) * D]);
      }
  a.add(rel_err(as_double(to_host(o)), ref), "lens 1,17,64,100,257,383 heads 4/2");
  return a.done();
}

CheckResult check_decode(std::uint64_t seed, int heads, int kvh, int forced_tps) {
  Acc a("decode_attention_g" + std::to_string(heads / kvh) + (forced_tps ? "_split" : ""), 1e-2);
  std::vector<int> ctx = {1, 15, 16, 300, 1000};
  int B = int(ctx.size()), D = 128, BS = 16;
  int maxc = *std::max_element(ctx.begin(), ctx.end());
  int mbps = (maxc + BS - 1) / BS;
  int nblocks = B * mbps + 3;
  // A random permutation of cache blocks, so block tables are not the identity.
  std::vector<int> perm(nblocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::uint64_t st = seed * 2654435761u + 1;
  for (int i = nblocks - 1; i > 0; --i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(perm[i], perm[int((st >> 33) % std::uint64_t(i + 1))]);
  }
  std::vector<int> table(std::size_t(B) * mbps);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = perm[i];
  auto q = random_buffer<bf16>(std::size_t(B) * heads * D, Elem::BF16, seed++);
  auto kc = random_buffer<bf16>(std::size_t(nblocks) * kvh * BS * D, Elem::BF16, seed++);
  auto vc = random_buffer<bf16>(std::size_t(nblocks) * kvh * BS * D, Elem::BF16, seed++);
  DeviceBuffer<int> dt(table.size()), dc(ctx.size());
  CALIB_CUDA(cudaMemcpy(dt.get(), table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
  CALIB_CUDA(cudaMemcpy(dc.get(), ctx.data(), ctx.size() * sizeof(int), cudaMemcpyHostToDevice));
  DecodeArgs p;
  p.q = q.get();
  p.k_cache = kc.get();
  p.v_cache = vc.get();
  p.block_table = dt.get();
  p.context_lens = dc.get();
  p.batch = B;
  p.heads = heads;
  p.kv_heads = kvh;
  p.max_blocks_per_seq = mbps;
  if (forced_tps) {
    p.tokens_per_split = forced_tps;
    p.num_splits = (maxc + forced_tps - 1) / forced_tps;
  } else {
    p.tokens_per_split = (maxc + 31) / 32 * 32;
    p.num_splits = 1;
  }
  DeviceBuffer<bf16> out(std::size_t(B) * heads * D);
  DeviceBuffer<float> po(std::size_t(B) * heads * p.num_splits * D),
      pl(std::size_t(B) * heads * p.num_splits);
  p.out = out.get();
  p.partial_o = po.get();
  p.partial_lse = pl.get();
  poison(out.get(), out.bytes());
  decode_attention(p, nullptr);
  auto hq = as_double(to_host(q)), hk = as_double(to_host(kc)), hv = as_double(to_host(vc));
  std::vector<double> ref(std::size_t(B) * heads * D);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h) {
      const int g = h / (heads / kvh);
      auto row = [&](int t) {
        return ((std::size_t(table[std::size_t(b) * mbps + t / BS]) * kvh + g) * BS + t % BS) * D;
      };
      attend_ref(&hq[(std::size_t(b) * heads + h) * D], ctx[b], D, 1.0 / std::sqrt(double(D)),
                 [&](int t) { return &hk[row(t)]; }, [&](int t) { return &hv[row(t)]; },
                 &ref[(std::size_t(b) * heads + h) * D]);
    }
  a.add(rel_err(as_double(to_host(out)), ref), "ctx 1,15,16,300,1000 heads " + std::to_string(heads) + "/" +
                                                   std::to_string(kvh) + " splits " +
                                                   std::to_string(p.num_splits));
  return a.done();
}

CheckResult check_rmsnorm(std::uint64_t seed) {
  Acc a("rmsnorm", 1e-2);
  for (int hidden : {8, 136, 2568, 4096, 5128, 8192, 16384}) {
    int rows = 3;
    auto x = random_buffer<bf16>(std::size_t(rows) * hidden, Elem::BF16, seed++, 3.f);
    auto w = random_buffer<bf16>(hidden, Elem::BF16, seed++);
    DeviceBuffer<bf16> y(x.size());
    poison(y.get(), y.bytes());
    rmsnorm(x.get(), w.get(), y.get(), rows, hidden, 1e-6f, nullptr);
    auto hx = as_double(to_host(x)), hw = as_double(to_host(w));
    std::vector<double> ref(hx.size());
    for (int r = 0; r < rows; ++r) {
      double ss = 0;
      for (int j = 0; j < hidden; ++j)
        ss += hx[std::size_t(r) * hidden + j] * hx[std::size_t(r) * hidden + j];
      double inv = 1.0 / std::sqrt(ss / hidden + 1e-6);
      for (int j = 0; j < hidden; ++j)
        ref[std::size_t(r) * hidden + j] = hx[std::size_t(r) * hidden + j] * inv * hw[j];
    }
    a.add(rel_err(as_double(to_host(y)), ref), std::to_string(rows) + "x" + std::to_string(hidden));
  }
  return a.done();
}

CheckResult check_swiglu(std::uint64_t seed) {
  Acc a("swiglu", 1e-2);
  for (int ffn : {8, 1000, 14336}) {
    int rows = 5;
    auto gu = random_buffer<bf16>(std::size_t(rows) * 2 * ffn, Elem::BF16, seed++, 4.f);
    DeviceBuffer<bf16> out(std::size_t(rows) * ffn);
    poison(out.get(), out.bytes());
    swiglu(gu.get(), out.get(), rows, ffn, nullptr);
    auto h = as_double(to_host(gu));
    std::vector<double> ref(std::size_t(rows) * ffn);
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < ffn; ++j) {
        double g = h[std::size_t(r) * 2 * ffn + j], u = h[std::size_t(r) * 2 * ffn + ffn + j];
        ref[std::size_t(r) * ffn + j] = g / (1 + std::exp(-g)) * u;
      }
    a.add(rel_err(as_double(to_host(out)), ref), std::to_string(rows) + "x" + std::to_string(ffn));
  }
  return a.done();
}

CheckResult check_rope(std::uint64_t seed) {
  Acc a("rope", 1e-2);
  for (int D : {64, 128}) {
    int T = 7, H = 3;
    auto x = random_buffer<bf16>(std::size_t(T) * H * D, Elem::BF16, seed++);
    std::vector<int> pos = {0, 1, 5, 100, 2047, 4096, 30000};
    DeviceBuffer<int> dp(pos.size());
    CALIB_CUDA(cudaMemcpy(dp.get(), pos.data(), pos.size() * sizeof(int), cudaMemcpyHostToDevice));
    auto before = as_double(to_host(x));
    rope(x.get(), dp.get(), T, H, D, 10000.f, nullptr);
    std::vector<double> ref(before.size());
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h)
        for (int j = 0; j < D / 2; ++j) {
          double ang = pos[t] * std::pow(10000.0, -2.0 * j / D);
          std::size_t base = (std::size_t(t) * H + h) * D;
          double x0 = before[base + j], x1 = before[base + j + D / 2];
          ref[base + j] = x0 * std::cos(ang) - x1 * std::sin(ang);
          ref[base + j + D / 2] = x1 * std::cos(ang) + x0 * std::sin(ang);
        }
    a.add(rel_err(as_double(to_host(x)), ref), "7x3x" + std::to_string(D));
  }
  return a.done();
}

}  // namespace

const std::vector<NamedCheck>& all_checks() {
  static const std::vector<NamedCheck> checks = {
      {"copy", check_copy},
      {"fill_uniform", [](std::uint64_t s) { return check_fill(s, FillDistribution::Uniform); }},
      {"fill_normal", [](std::uint64_t s) { return check_fill(s, FillDistribution::Normal); }},
      {"reduce_atomic", [](std::uint64_t s) { return check_reduce(s, 0); }},
      {"reduce_smem_tree", [](std::uint64_t s) { return check_reduce(s, 1); }},
      {"reduce_warp_shuffle", [](std::uint64_t s) { return check_reduce(s, 2); }},
      {"transpose", [](std::uint64_t s) { return check_transpose(s, false); }},
      {"transpose_padded", [](std::uint64_t s) { return check_transpose(s, true); }},
      {"softmax_naive", [](std::uint64_t s) { return check_softmax(s, false); }},
      {"softmax_online", [](std::uint64_t s) { return check_softmax(s, true); }},
      {"gemm_tiled", [](std::uint64_t s) { return check_own_gemm(s, false); }},
      {"gemm_mma", [](std::uint64_t s) { return check_own_gemm(s, true); }},
      {"gemm_wgmma", check_wgmma},
      {"cublaslt_bf16", [](std::uint64_t s) { return check_cublas(s, GemmDtype::BF16); }},
      {"cublaslt_fp16", [](std::uint64_t s) { return check_cublas(s, GemmDtype::FP16); }},
      {"cublaslt_tf32", [](std::uint64_t s) { return check_cublas(s, GemmDtype::TF32); }},
      {"cublaslt_fp8", [](std::uint64_t s) { return check_cublas(s, GemmDtype::FP8); }},
      {"cublaslt_int8", [](std::uint64_t s) { return check_cublas(s, GemmDtype::INT8); }},
      {"attention_prefill_d64_causal", [](std::uint64_t s) { return check_prefill(s, 64, true); }},
      {"attention_prefill_d128_causal", [](std::uint64_t s) { return check_prefill(s, 128, true); }},
      {"attention_prefill_d128", [](std::uint64_t s) { return check_prefill(s, 128, false); }},
      {"decode_attention_g4", [](std::uint64_t s) { return check_decode(s, 8, 2, 0); }},
      {"decode_attention_g4_split", [](std::uint64_t s) { return check_decode(s, 8, 2, 64); }},
      {"decode_attention_g8_split", [](std::uint64_t s) { return check_decode(s, 8, 1, 96); }},
      {"decode_attention_g1_split", [](std::uint64_t s) { return check_decode(s, 4, 4, 256); }},
      {"decode_attention_g2_split", [](std::uint64_t s) { return check_decode(s, 8, 4, 32); }},
      {"rmsnorm", check_rmsnorm},
      {"swiglu", check_swiglu},
      {"rope", check_rope},
  };
  return checks;
}

}  // namespace infraplan::calib
