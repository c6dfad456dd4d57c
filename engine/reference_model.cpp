#include "engine/reference_model.hpp"

#include <cmath>
#include <utility>

#include "common/error.hpp"
#include "engine/fp8_e4m3.hpp"

namespace infraplan::engine {

ReferenceModel::ReferenceModel(const LlamaConfig& c, std::vector<std::uint16_t> weights, WeightFormat format,
                               KvFormat kv, KvScales kv_scales)
    : c_(c), layout_(c), format_(format), kv_format_(kv), kv_scales_(std::move(kv_scales)), rope_(rope_table(c)) {
  kv_scales_.validate(c_.layers);
  if (std::int64_t(weights.size()) != layout_.total_elems())
    throw Error("ReferenceModel: " + std::to_string(weights.size()) + " weights for a layout of " +
                std::to_string(layout_.total_elems()));
  wf_.resize(weights.size());
  for (std::size_t i = 0; i < weights.size(); ++i) wf_[i] = bf16_value(weights[i]);
  wscale_.assign(layout_.tensors().size(), 1.0f);
  if (format_ != WeightFormat::FP8) return;
  for (int l = 0; l < c_.layers; ++l)
    for (LayerTensor t : {LayerTensor::Qkv, LayerTensor::O, LayerTensor::GateUp, LayerTensor::Down}) {
      const TensorSlot& s = layout_.layer(l, t);
      float* v = wf_.data() + s.offset;
      const Fp8Tensor q = fp8_quantize_tensor(v, std::size_t(s.elems()));
      for (std::int64_t i = 0; i < s.elems(); ++i) v[i] = fp8_e4m3_value(q.bits[std::size_t(i)]);
      wscale_[s.id] = q.scale;
    }
}

float ReferenceModel::weight_scale(int layer, LayerTensor t) const {
  if (format_ != WeightFormat::FP8 || !is_fp8_linear(t))
    throw Error("ReferenceModel::weight_scale: only the linear weights of an fp8 model have a scale");
  return wscale_[layout_.layer(layer, t).id];
}

ReferenceModel::State ReferenceModel::new_state() const {
  State s;
  s.k.assign(std::size_t(c_.layers), {});
  s.v.assign(std::size_t(c_.layers), {});
  return s;
}

std::vector<float> ReferenceModel::matvec(const TensorSlot& t, const std::vector<float>& x,
                                          bool round) const {
  std::vector<float> y(static_cast<std::size_t>(t.rows));
  for (std::int64_t r = 0; r < t.rows; ++r) {
    double acc = 0;
    const float* wr = wf_.data() + t.offset + r * t.cols;
    for (std::int64_t c = 0; c < t.cols; ++c) acc += double(x[std::size_t(c)]) * double(wr[c]);
    y[std::size_t(r)] = round ? round_bf16(float(acc)) : float(acc);
  }
  return y;
}

std::vector<float> ReferenceModel::linear(int layer, LayerTensor which, const std::vector<float>& x,
                                          const Fp8Row& fp8) const {
  const TensorSlot& t = layout_.layer(layer, which);
  if (format_ != WeightFormat::FP8) return matvec(t, x, true);
  const std::size_t slot = std::size_t(layer) * kFp8Gemms + std::size_t(fp8_gemm_index(which));
  float amax = 0.0f;
  for (float v : x) amax = std::fmax(amax, std::fabs(v));
  if (fp8.row_amax) fp8.row_amax[slot] = amax;
  const float xs = fp8.act_scales ? fp8.act_scales[slot] : fp8_scale_for_amax(amax);
  std::vector<float> xq(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) xq[i] = fp8_e4m3_value(fp8_quantize(x[i], xs));
  // E4M3 products and their sums are exact in double (8 significant bits each, exponents within
  // 2⁻¹⁸ … 2¹⁷, fewer than 2¹⁶ terms); the scales apply once, then the bf16 output rounding.
  const double scale = double(xs) * double(wscale_[t.id]);
  std::vector<float> y(static_cast<std::size_t>(t.rows));
  for (std::int64_t r = 0; r < t.rows; ++r) {
    double acc = 0;
    const float* wr = wf_.data() + t.offset + r * t.cols;
    for (std::int64_t c = 0; c < t.cols; ++c) acc += double(xq[std::size_t(c)]) * double(wr[c]);
    y[std::size_t(r)] = round_bf16(float(acc * scale));
  }
  return y;
}

std::vector<float> ReferenceModel::rmsnorm(const std::vector<float>& x, const TensorSlot& wt) const {
  double ss = 0;
  for (float v : x) ss += double(v) * double(v);
  const double r = 1.0 / std::sqrt(ss / double(x.size()) + double(c_.rms_eps));
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    y[i] = round_bf16(float(double(x[i]) * r * double(w(wt, std::int64_t(i)))));
  return y;
}

std::vector<float> ReferenceModel::step(State& st, std::int32_t token, const Fp8Row& fp8) const {
  if (token < 0 || token >= c_.vocab)
    throw Error("ReferenceModel: token " + std::to_string(token) + " outside the vocabulary");
  if (st.len >= c_.max_seq) throw Error("ReferenceModel: sequence longer than max_seq");
  const int h = c_.hidden, D = c_.head_dim, H = c_.heads, K = c_.kv_heads, G = H / K, half = D / 2;
  const std::int64_t pos = st.len;
  std::vector<float> resid(static_cast<std::size_t>(h));
  for (int i = 0; i < h; ++i) resid[std::size_t(i)] = w(layout_.embed(), std::int64_t(token) * h + i);
  auto rotate = [&](float* v) {  // rotate-half pairs (j, j + D/2), in place, rounded to bf16
    for (int j = 0; j < half; ++j) {
      const double cs = rope_[(std::size_t(pos) * half + std::size_t(j)) * 2];
      const double sn = rope_[(std::size_t(pos) * half + std::size_t(j)) * 2 + 1];
      const double a = v[j], b = v[j + half];
      v[j] = round_bf16(float(a * cs - b * sn));
      v[j + half] = round_bf16(float(b * cs + a * sn));
    }
  };
  const double scale = 1.0 / std::sqrt(double(D));
  for (int l = 0; l < c_.layers; ++l) {
    std::vector<float> x = rmsnorm(resid, layout_.layer(l, LayerTensor::AttnNorm));
    std::vector<float> qkv = linear(l, LayerTensor::Qkv, x, fp8);
    float* q = qkv.data();
    float* k = qkv.data() + c_.q_dim();
    const float* v = qkv.data() + c_.q_dim() + c_.kv_dim();
    for (int hh = 0; hh < H; ++hh) rotate(q + hh * D);
    for (int hh = 0; hh < K; ++hh) rotate(k + hh * D);
    auto& kc = st.k[std::size_t(l)];
    auto& vc = st.v[std::size_t(l)];
    kc.insert(kc.end(), k, k + c_.kv_dim());
    vc.insert(vc.end(), v, v + c_.kv_dim());
    // fp8 KV: the cache keeps E4M3 values; the scales return in the scores and the output.
    const bool kv8 = kv_format_ == KvFormat::FP8;
    const double k_scale = kv8 ? kv_scales_.k(l) : 1.0, v_scale = kv8 ? kv_scales_.v(l) : 1.0;
    if (kv8)
      for (std::size_t i = kc.size() - std::size_t(c_.kv_dim()); i < kc.size(); ++i) {
        kc[i] = fp8_e4m3_value(fp8_quantize(kc[i], kv_scales_.k(l)));
        vc[i] = fp8_e4m3_value(fp8_quantize(vc[i], kv_scales_.v(l)));
      }
    const std::int64_t n = pos + 1;
    std::vector<float> attn(static_cast<std::size_t>(c_.q_dim()));
    std::vector<double> s(static_cast<std::size_t>(n));
    for (int hh = 0; hh < H; ++hh) {
      const int kvh = hh / G;
      double mx = -1e300;
      for (std::int64_t t = 0; t < n; ++t) {
        double dot = 0;
        const float* kt = kc.data() + std::size_t(t) * std::size_t(c_.kv_dim()) + std::size_t(kvh) * D;
        for (int d = 0; d < D; ++d) dot += double(q[hh * D + d]) * double(kt[d]);
        s[std::size_t(t)] = dot * k_scale * scale;
        mx = std::max(mx, s[std::size_t(t)]);
      }
      double sum = 0;
      for (std::int64_t t = 0; t < n; ++t) sum += (s[std::size_t(t)] = std::exp(s[std::size_t(t)] - mx));
      if (bf16_probabilities_)  // the PV product's operand only; the normaliser keeps the exact sum
        for (double& p : s) p = double(round_bf16(float(p)));
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (std::int64_t t = 0; t < n; ++t)
          o += s[std::size_t(t)] *
               double(vc[std::size_t(t) * std::size_t(c_.kv_dim()) + std::size_t(kvh) * D + std::size_t(d)]);
        attn[std::size_t(hh * D + d)] = round_bf16(float(o * v_scale / sum));
      }
    }
    std::vector<float> delta = linear(l, LayerTensor::O, attn, fp8);
    for (int i = 0; i < h; ++i)
      resid[std::size_t(i)] = round_bf16(resid[std::size_t(i)] + delta[std::size_t(i)]);
    x = rmsnorm(resid, layout_.layer(l, LayerTensor::FfnNorm));
    std::vector<float> gu = linear(l, LayerTensor::GateUp, x, fp8);
    std::vector<float> act(static_cast<std::size_t>(c_.ffn));
    for (int j = 0; j < c_.ffn; ++j) {
      const double g = gu[std::size_t(j)], u = gu[std::size_t(c_.ffn + j)];
      act[std::size_t(j)] = round_bf16(float(g / (1.0 + std::exp(-g)) * u));
    }
    delta = linear(l, LayerTensor::Down, act, fp8);
    for (int i = 0; i < h; ++i)
      resid[std::size_t(i)] = round_bf16(resid[std::size_t(i)] + delta[std::size_t(i)]);
  }
  ++st.len;
  const std::vector<float> x = rmsnorm(resid, layout_.final_norm());
  return matvec(layout_.lm_head(), x, false);
}

}  // namespace infraplan::engine
