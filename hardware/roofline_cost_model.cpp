#include "hardware/roofline_cost_model.hpp"

#include <algorithm>
#include <cctype>

#include "common/error.hpp"

namespace infraplan::hw {

const char* cost_source_name(CostSource s) {
  switch (s) {
    case CostSource::Measured:
      return "measured";
    case CostSource::Extrapolated:
      return "extrapolated";
    case CostSource::Roofline:
      return "roofline";
  }
  return "?";
}

double AttentionPrefillShape::flops() const {
  // Per (query, key) pair: QKᵀ and PV each 2·head_dim FLOPs per head.
  const double q = double(q_len), kv = double(kv_len);
  double pairs;
  if (causal) {
    // Query i (0-based, within the new tokens) sees the prefix plus i + 1 new keys.
    const double prefix = kv - q;
    pairs = q * prefix + q * (q + 1) / 2;
  } else {
    pairs = q * kv;
  }
  return 4.0 * double(batch) * double(heads) * double(head_dim) * pairs;
}

double AttentionDecodeShape::kv_bytes() const {
  return 2.0 * double(total_context_tokens) * double(kv_heads) * double(head_dim) * dtype_bytes(kv_dtype);
}

double AttentionDecodeShape::flops() const {
  return 4.0 * double(total_context_tokens) * double(heads) * double(head_dim);
}

double gemm_min_bytes(const GemmShape& s) {
  double in = dtype_bytes(s.dtype);
  double out = (s.dtype == Dtype::FP32 || s.dtype == Dtype::TF32 || s.dtype == Dtype::INT8) ? 4 : 2;
  if (s.dtype == Dtype::FP8 || s.dtype == Dtype::FP4 || s.dtype == Dtype::INT4) out = 2;
  double m = double(s.m), n = double(s.n), k = double(s.k);
  return double(s.batch) * ((m * k + k * n) * in + m * n * out);
}

RooflineCostModel::RooflineCostModel(GpuSpec gpu, double launch_seconds)
    : gpu_(std::move(gpu)), launch_(launch_seconds) {}

double RooflineCostModel::peak_flops(Dtype d) const {
  auto p = gpu_.peak(d);
  if (!p) {
    // INT4 weight-only GEMMs run on the 16-bit tensor cores after dequantisation.
    if (d == Dtype::INT4) return peak_flops(Dtype::FP16);
    throw Error(gpu_.name + " has no tensor-core support for " + std::string(dtype_name(d)) +
                " (compute capability " + std::to_string(gpu_.compute_capability) + ")");
  }
  return *p;
}

static CostEstimate roofline(double flops, double bytes, double peak, double bw, double launch,
                             const char* what) {
  CostEstimate e;
  double t_compute = flops / peak, t_mem = bytes / bw;
  e.seconds = std::max(t_compute, t_mem) + launch;
  bool compute_bound = t_compute >= t_mem;
  e.achieved = compute_bound ? flops / e.seconds : bytes / e.seconds;
  e.ceiling = compute_bound ? peak : bw;
  e.source = CostSource::Roofline;
  e.detail = std::string(what) + (compute_bound ? ", compute-bound" : ", memory-bound");
  return e;
}

CostEstimate RooflineCostModel::gemm(const GemmShape& s) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) throw Error("gemm: m, n, k and batch must be > 0");
  return roofline(s.flops(), gemm_min_bytes(s), peak_flops(s.dtype), gpu_.hbm_GBps * 1e9, launch_, "gemm");
}

CostEstimate RooflineCostModel::attention_prefill(const AttentionPrefillShape& s) const {
  if (s.batch <= 0 || s.q_len <= 0 || s.kv_len < s.q_len || s.heads <= 0 || s.kv_heads <= 0 ||
      s.head_dim <= 0)
    throw Error("attention_prefill: need batch, q_len, heads, kv_heads, head_dim > 0 and kv_len >= q_len");
  double e = dtype_bytes(s.dtype);
  double bytes = double(s.batch) * e *
                 (2.0 * double(s.q_len) * double(s.heads) * double(s.head_dim) +
                  2.0 * double(s.kv_len) * double(s.kv_heads) * double(s.head_dim));
  return roofline(s.flops(), bytes, peak_flops(s.dtype == Dtype::FP8 ? Dtype::FP8 : Dtype::BF16),
                  gpu_.hbm_GBps * 1e9, launch_, "attention prefill");
}

CostEstimate RooflineCostModel::attention_decode(const AttentionDecodeShape& s) const {
  if (s.batch <= 0 || s.total_context_tokens < 0 || s.heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0)
    throw Error("attention_decode: need batch, heads, kv_heads, head_dim > 0 and total_context_tokens >= 0");
  double q_bytes = 4.0 * double(s.batch) * double(s.heads) * double(s.head_dim);  // q in, out (16-bit)
  return roofline(s.flops(), s.kv_bytes() + q_bytes, peak_flops(Dtype::BF16), gpu_.hbm_GBps * 1e9, launch_,
                  "attention decode");
}

CostEstimate RooflineCostModel::memory_bound(double bytes) const {
  if (bytes < 0) throw Error("memory_bound: bytes must be >= 0");
  return roofline(0, bytes, 1, gpu_.hbm_GBps * 1e9, launch_, "memory-bound kernel");
}

}  // namespace infraplan::hw
