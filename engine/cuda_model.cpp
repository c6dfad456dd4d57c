#include "engine/cuda_model.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "calib_kernels/kernels.hpp"
#include "common/error.hpp"
#include "engine/fp8_kernels.hpp"

namespace infraplan::engine {

namespace {
int pow2_ceil(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}
constexpr int kMaxSplits = 64;
}  // namespace

/// Element offsets of the step's arrays in the uploaded int32 buffer.
struct CudaModel::Offsets {
  int tokens = 0, positions = 0, slots = 0, samples = 0, dec_ctx = 0, dec_tables = 0, pre_cu = 0,
      pre_start = 0, pre_kv = 0, pre_tables = 0, live = 0, copies = 0, total = 0;
};

/// An instantiated CUDA graph (RAII).
class CudaModel::Graph {
 public:
  explicit Graph(cudaGraph_t g) { CALIB_CUDA(cudaGraphInstantiate(&exec_, g, 0)); }
  ~Graph() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void launch(cudaStream_t s) const { CALIB_CUDA(cudaGraphLaunch(exec_, s)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

std::vector<int> CudaModel::graph_sizes(int max) {
  std::vector<int> v;
  for (int b : {1, 2, 4})
    if (b <= max) v.push_back(b);
  for (int b = 8; b <= max; b += 8) v.push_back(b);
  return v;
}

std::int64_t CudaModel::block_bytes(const LlamaConfig& c, KvFormat f) {
  return std::int64_t(c.layers) * 2 * c.kv_heads * kBlockSize * kHeadDim * kv_element_bytes(f);
}

std::int64_t CudaModel::workspace_bytes(const LlamaConfig& c, const CudaModelOptions& o, WeightFormat f) {
  const std::int64_t T = o.max_tokens, S = o.max_seqs;
  const std::int64_t act =
      T * (3 * std::int64_t(c.hidden) + c.qkv_dim() + 2 * std::int64_t(c.q_dim()) + 3 * std::int64_t(c.ffn)) *
      2;
  const std::int64_t head = S * (std::int64_t(c.hidden) * 2 + std::int64_t(c.vocab) * 4);
  const std::int64_t split = S * c.heads * kMaxSplits * (kHeadDim + 1) * 4;
  const std::int64_t rope = std::int64_t(c.max_seq) * kHeadDim * 4;
  const std::int64_t fp8_in =
      f == WeightFormat::FP8
          ? T * std::max({std::int64_t(c.hidden), std::int64_t(c.q_dim()), std::int64_t(c.ffn)})
          : 0;
  return act + head + split + rope + fp8_in + (std::int64_t(64) << 20);  // + cuBLASLt workspace, metadata
}

CudaModel::CudaModel(DeviceWeights weights, const CudaModelOptions& o) : w_(std::move(weights)), o_(o) {
  const LlamaConfig& c = w_.config();
  if (o_.num_blocks <= 0) throw Error("CudaModel: num_blocks must be positive");
  if (o_.keep_fp8_gemm_io && o_.cuda_graphs)
    throw std::logic_error("CudaModel: keep_fp8_gemm_io copies from eager steps only; turn cuda_graphs off");
  if (o_.max_seqs <= 0 || o_.max_tokens < o_.max_seqs)
    throw Error("CudaModel: need 0 < max_seqs ≤ max_tokens (got " + std::to_string(o_.max_seqs) + ", " +
                std::to_string(o_.max_tokens) + ")");
  o_.kv_scales.validate(c.layers);
  mb_ = (c.max_seq + kBlockSize - 1) / kBlockSize;
  block_bytes_ = std::int64_t(c.kv_heads) * kBlockSize * kHeadDim * kv_element_bytes(o_.kv_format);
  plane_bytes_ = (std::int64_t(o_.num_blocks) + 1) * block_bytes_;
  kv_ = calib::DeviceBuffer<unsigned char>(std::size_t(plane_bytes_) * 2 * std::size_t(c.layers));
  CALIB_CUDA(cudaMemsetAsync(kv_.get(), 0, kv_.bytes(), stream_.get()));
  const std::vector<float> rope = rope_table(c);
  rope_ = calib::DeviceBuffer<float2>(rope.size() / 2);
  CALIB_CUDA(cudaMemcpy(rope_.get(), rope.data(), rope.size() * sizeof(float), cudaMemcpyHostToDevice));
  const std::size_t T = std::size_t(o_.max_tokens), S = std::size_t(o_.max_seqs), h = std::size_t(c.hidden);
  resid_ = calib::DeviceBuffer<bf16>(T * h);
  x_ = calib::DeviceBuffer<bf16>(T * h);
  delta_ = calib::DeviceBuffer<bf16>(T * h);
  qkv_ = calib::DeviceBuffer<bf16>(T * std::size_t(c.qkv_dim()));
  q_ = calib::DeviceBuffer<bf16>(T * std::size_t(c.q_dim()));
  attn_ = calib::DeviceBuffer<bf16>(T * std::size_t(c.q_dim()));
  gu_ = calib::DeviceBuffer<bf16>(T * 2 * std::size_t(c.ffn));
  act_ = calib::DeviceBuffer<bf16>(T * std::size_t(c.ffn));
  xs_ = calib::DeviceBuffer<bf16>(S * h);
  logits_ = calib::DeviceBuffer<float>(S * std::size_t(c.vocab));
  partial_o_ = calib::DeviceBuffer<float>(S * std::size_t(c.heads) * kMaxSplits * kHeadDim);
  partial_lse_ = calib::DeviceBuffer<float>(S * std::size_t(c.heads) * kMaxSplits);
  out_tokens_ = calib::DeviceBuffer<int>(S);
  if (is_fp8()) {
    x8_ = calib::DeviceBuffer<fp8>(T * std::size_t(std::max({c.hidden, c.q_dim(), c.ffn})));
    act_amax_ = calib::DeviceBuffer<float>(std::size_t(c.layers) * kFp8Gemms);
    act_scale_ = calib::DeviceBuffer<float>(std::size_t(c.layers) * kFp8Gemms * kFp8ScaleStride);
    CALIB_CUDA(cudaMemsetAsync(act_amax_.get(), 0, act_amax_.bytes(), stream_.get()));
    CALIB_CUDA(cudaMemsetAsync(act_scale_.get(), 0, act_scale_.bytes(), stream_.get()));
  }
  const Offsets cap = offsets(o_.max_tokens, o_.max_seqs, o_.max_seqs, o_.max_seqs, o_.max_seqs);
  // The largest layout: every array at its maximum at once.
  const std::size_t meta = std::size_t(cap.total) + std::size_t(o_.max_seqs) * std::size_t(mb_) + 16;
  meta_ = calib::DeviceBuffer<int>(meta);
  meta_host_ = std::make_unique<calib::PinnedBuffer<int>>(meta);
  tokens_host_ = std::make_unique<calib::PinnedBuffer<int>>(S);
  graph_sizes_ = graph_sizes(std::min(o_.max_graph_batch, o_.max_seqs));
  int dev = 0, sms = 0;
  CALIB_CUDA(cudaGetDevice(&dev));
  CALIB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (is_fp8() || kv_fp8()) {
    int major = 0, minor = 0;
    CALIB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CALIB_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major * 10 + minor < 89)
      throw Error("CudaModel: fp8 weights and fp8 KV need sm_89 or newer (fp8 tensor cores and conversions); this GPU is sm_" +
                  std::to_string(major) + std::to_string(minor));
  }
  slots_ = 2 * sms;  // the decode kernel's 96 KiB of shared memory fit twice in a multiprocessor
  CALIB_CUDA(cudaStreamSynchronize(stream_.get()));
}

CudaModel::~CudaModel() = default;

void CudaModel::fill_kv_random(std::uint64_t seed) {
  if (kv_fp8())
    init_fp8_random(reinterpret_cast<fp8*>(kv_.get()), std::int64_t(kv_.size()), seed, 0xC0DEu, stream_.get());
  else
    init_weights(reinterpret_cast<bf16*>(kv_.get()), std::int64_t(kv_.size() / 2), WeightInit{0.0f, 1.0f}, seed,
                 0xC0DEu, stream_.get());
  synchronize();
}

unsigned char* CudaModel::k_plane(int l) const { return kv_.get() + std::int64_t(2 * l) * plane_bytes_; }

void CudaModel::synchronize() const { CALIB_CUDA(cudaStreamSynchronize(stream_.get())); }

int CudaModel::decode_splits(int batch) const {
  // Enough CTAs to fill the GPU's resident slots; each sequence's context is shared evenly by the
  // splits inside the kernel, so the launch shape depends on the batch alone (one graph per size).
  const int per_split = batch * config().kv_heads;
  return std::min(kMaxSplits, pow2_ceil(std::max(1, (slots_ + per_split - 1) / per_split)));
}

CudaModel::Offsets CudaModel::offsets(int rows, int decodes, int chunks, int samples, int copies) const {
  Offsets o;
  int at = 0;
  auto take = [&](int n) {
    const int here = at;
    at += (n + 3) / 4 * 4;  // 16-byte aligned arrays
    return here;
  };
  o.tokens = take(rows);
  o.positions = take(rows);
  o.slots = take(rows);
  o.samples = take(samples);
  o.dec_ctx = take(decodes);
  o.dec_tables = take(decodes * mb_);
  o.pre_cu = take(chunks + 1);
  o.pre_start = take(chunks);
  o.pre_kv = take(chunks);
  o.pre_tables = take(chunks * mb_);
  o.live = take(1);
  o.copies = take(2 * copies);
  o.total = at;
  return o;
}

void CudaModel::pack(const StepPlan& p, const Offsets& o, int live_rows) {
  CALIB_CUDA(cudaEventRecord(ev_start_.get(), stream_.get()));
  int* m = meta_host_->get();
  auto put = [&](int off, const std::vector<std::int32_t>& v) {
    if (!v.empty()) std::memcpy(m + off, v.data(), v.size() * sizeof(std::int32_t));
  };
  put(o.tokens, p.tokens);
  put(o.positions, p.positions);
  put(o.slots, p.slots);
  put(o.samples, p.sample_rows);
  put(o.dec_ctx, p.decode_context);
  put(o.dec_tables, p.decode_tables);
  put(o.pre_cu, p.prefill_cu);
  put(o.pre_start, p.prefill_start);
  put(o.pre_kv, p.prefill_kv);
  put(o.pre_tables, p.prefill_tables);
  m[o.live] = live_rows;
  for (std::size_t i = 0; i < p.copies.size(); ++i) {
    m[o.copies + 2 * int(i)] = p.copies[i].src;
    m[o.copies + 2 * int(i) + 1] = p.copies[i].dst;
  }
  CALIB_CUDA(cudaMemcpyAsync(meta_.get(), m, std::size_t(o.total) * sizeof(int), cudaMemcpyHostToDevice,
                             stream_.get()));
  if (!p.copies.empty()) {
    copy_kv_blocks(kv_.get(), reinterpret_cast<const int2*>(meta_.get() + o.copies), int(p.copies.size()),
                   config().layers, plane_bytes_, block_bytes_, stream_.get());
    stats_.block_copies += std::int64_t(p.copies.size());
  }
}

void CudaModel::forward(const Offsets& off, int T, int D, int P, int S, int max_q) {
  const LlamaConfig& c = config();
  const WeightLayout& L = w_.layout();
  cudaStream_t s = stream_.get();
  const int* meta = meta_.get();
  const int h = c.hidden, qd = c.q_dim();
  const int* live = meta + off.live;
  mark(nullptr);
  embed_tokens(w_.at(L.embed()), meta + off.tokens, resid_.get(), T, h, s);
  mark("embedding");
  if (is_fp8()) {
    CALIB_CUDA(cudaMemsetAsync(act_amax_.get(), 0, act_amax_.bytes(), s));
    mark("fp8_amax_reset");
  }
  // The fused add + RMSNorm; with fp8 it also reduces the amax of its output (the next GEMM's input).
  auto norm = [&](int l, const bf16* delta, LayerTensor norm_w, LayerTensor next) {
    if (is_fp8())
      add_rmsnorm_amax(resid_.get(), delta, w_.at(L.layer(l, norm_w)), x_.get(), T, h, c.rms_eps, live,
                       amax_slot(l, next), s);
    else
      add_rmsnorm(resid_.get(), delta, w_.at(L.layer(l, norm_w)), x_.get(), T, h, c.rms_eps, s);
    mark("add_rmsnorm");
  };
  for (int l = 0; l < c.layers; ++l) {
    const float ks = o_.kv_scales.k(l), vs = o_.kv_scales.v(l);
    norm(l, l == 0 ? nullptr : delta_.get(), LayerTensor::AttnNorm, LayerTensor::Qkv);
    linear(l, LayerTensor::Qkv, x_.get(), qkv_.get(), T, "gemm_qkv");
    if (kv_fp8())
      rope_qkv_to_fp8_cache(qkv_.get(), q_.get(), reinterpret_cast<fp8*>(k_plane(l)),
                            reinterpret_cast<fp8*>(v_plane(l)), meta + off.positions, meta + off.slots,
                            rope_.get(), T, c.heads, c.kv_heads, ks, vs, s);
    else
      rope_qkv_to_cache(qkv_.get(), q_.get(), reinterpret_cast<bf16*>(k_plane(l)),
                        reinterpret_cast<bf16*>(v_plane(l)), meta + off.positions, meta + off.slots,
                        rope_.get(), T, c.heads, c.kv_heads, s);
    mark("rope_kv_write");
    if (D > 0) {
      calib::DecodeArgs a;
      a.q = q_.get();
      if (kv_fp8()) {
        a.k_fp8 = k_plane(l);
        a.v_fp8 = v_plane(l);
        a.k_scale = ks;
        a.v_scale = vs;
      } else {
        a.k_cache = reinterpret_cast<const bf16*>(k_plane(l));
        a.v_cache = reinterpret_cast<const bf16*>(v_plane(l));
      }
      a.block_table = meta + off.dec_tables;
      a.context_lens = meta + off.dec_ctx;
      a.out = attn_.get();
      a.partial_o = partial_o_.get();
      a.partial_lse = partial_lse_.get();
      a.batch = D;
      a.heads = c.heads;
      a.kv_heads = c.kv_heads;
      a.head_dim = kHeadDim;
      a.block_size = kBlockSize;
      a.max_blocks_per_seq = mb_;
      a.num_splits = decode_splits(D);
      a.tokens_per_split = 0;
      calib::decode_attention(a, s);
      mark("attention_decode");
    }
    if (P > 0) {
      PagedPrefillArgs a;
      a.q = q_.get() + std::size_t(D) * qd;
      if (kv_fp8()) {
        a.k_fp8 = reinterpret_cast<const fp8*>(k_plane(l));
        a.v_fp8 = reinterpret_cast<const fp8*>(v_plane(l));
        a.k_scale = ks;
        a.v_scale = vs;
      } else {
        a.k_cache = reinterpret_cast<const bf16*>(k_plane(l));
        a.v_cache = reinterpret_cast<const bf16*>(v_plane(l));
      }
      a.out = attn_.get() + std::size_t(D) * qd;
      a.cu_q = meta + off.pre_cu;
      a.start = meta + off.pre_start;
      a.kv_len = meta + off.pre_kv;
      a.block_table = meta + off.pre_tables;
      a.chunks = P;
      a.max_q = max_q;
      a.heads = c.heads;
      a.kv_heads = c.kv_heads;
      a.max_blocks_per_seq = mb_;
      a.kernel = o_.prefill_kernel;
      paged_prefill_attention(a, s);
      mark("attention_prefill");
    }
    if (is_fp8()) {
      amax_bf16(attn_.get(), T, qd, live, amax_slot(l, LayerTensor::O), s);
      mark("amax_attention_out");
    }
    linear(l, LayerTensor::O, attn_.get(), delta_.get(), T, "gemm_o");
    norm(l, delta_.get(), LayerTensor::FfnNorm, LayerTensor::GateUp);
    linear(l, LayerTensor::GateUp, x_.get(), gu_.get(), T, "gemm_gate_up");
    if (is_fp8())
      swiglu_amax(gu_.get(), act_.get(), T, c.ffn, live, amax_slot(l, LayerTensor::Down), s);
    else
      calib::swiglu(gu_.get(), act_.get(), T, c.ffn, s);
    mark("swiglu");
    linear(l, LayerTensor::Down, act_.get(), delta_.get(), T, "gemm_down");
  }
  gather_add_rmsnorm(resid_.get(), delta_.get(), meta + off.samples, w_.at(L.final_norm()), xs_.get(), S, h,
                     c.rms_eps, s);
  mark("final_norm");
  gemm_.run(xs_.get(), w_.at(L.lm_head()), logits_.get(), S, c.vocab, h, true, s);
  mark("gemm_lm_head");
  argmax_rows(logits_.get(), out_tokens_.get(), S, c.vocab, s);
  mark("argmax");
}

float* CudaModel::amax_slot(int l, LayerTensor t) const {
  return act_amax_.get() + std::size_t(l) * kFp8Gemms + std::size_t(fp8_gemm_index(t));
}

float* CudaModel::scale_slot(int l, LayerTensor t) const {
  return act_scale_.get() + (std::size_t(l) * kFp8Gemms + std::size_t(fp8_gemm_index(t))) * kFp8ScaleStride;
}

void CudaModel::linear(int l, LayerTensor t, const bf16* X, bf16* Y, int rows, const char* label) {
  const TensorSlot& W = w_.layout().layer(l, t);
  const int n = int(W.rows), k = int(W.cols);
  cudaStream_t s = stream_.get();
  if (!is_fp8()) {
    gemm_.run(X, w_.at(W), Y, rows, n, k, false, s);
    mark(label);
    return;
  }
  quantize_fp8(X, std::int64_t(rows) * k, amax_slot(l, t), x8_.get(), scale_slot(l, t), s);
  mark("quantize_fp8");
  gemm_.run_fp8(x8_.get(), scale_slot(l, t), w_.fp8_at(W), w_.fp8_scale(W), Y, rows, n, k, s);
  mark(label);
  if (o_.keep_fp8_gemm_io) {
    Fp8GemmIo& io = fp8_io_.emplace_back();
    io.layer = l;
    io.tensor = t;
    io.rows = rows;
    io.n = n;
    io.k = k;
    io.x.resize(std::size_t(rows) * std::size_t(k));
    io.y.resize(std::size_t(rows) * std::size_t(n));
    CALIB_CUDA(cudaMemcpyAsync(io.x.data(), X, io.x.size() * 2, cudaMemcpyDeviceToHost, s));
    CALIB_CUDA(cudaMemcpyAsync(io.y.data(), Y, io.y.size() * 2, cudaMemcpyDeviceToHost, s));
  }
}

void CudaModel::mark(const char* label) {
  if (!marks_on_) return;
  if (!label) {  // a new step
    mark_labels_.clear();
    marks_used_ = 0;
  } else {
    mark_labels_.push_back(label);
  }
  if (marks_used_ == mark_events_.size()) mark_events_.push_back(std::make_unique<calib::Event>());
  CALIB_CUDA(cudaEventRecord(mark_events_[marks_used_++]->get(), stream_.get()));
}

std::vector<CudaModel::KernelTime> CudaModel::kernel_times() const {
  std::vector<KernelTime> out;
  for (std::size_t i = 0; i < mark_labels_.size() && i + 1 < marks_used_; ++i) {
    float ms = 0;
    CALIB_CUDA(cudaEventElapsedTime(&ms, mark_events_[i]->get(), mark_events_[i + 1]->get()));
    auto it = std::find_if(out.begin(), out.end(), [&](const KernelTime& k) { return k.label == mark_labels_[i]; });
    if (it == out.end()) it = out.insert(out.end(), KernelTime{mark_labels_[i], 0, 0});
    it->seconds += double(ms) * 1e-3;
    ++it->count;
  }
  return out;
}

void CudaModel::finish(int S) {
  cudaStream_t s = stream_.get();
  CALIB_CUDA(cudaEventRecord(ev_end_.get(), s));
  CALIB_CUDA(cudaMemcpyAsync(tokens_host_->get(), out_tokens_.get(), std::size_t(S) * sizeof(int),
                             cudaMemcpyDeviceToHost, s));
  if (o_.keep_logits) {
    logits_host_.resize(std::size_t(S) * std::size_t(config().vocab));
    CALIB_CUDA(cudaMemcpyAsync(logits_host_.data(), logits_.get(), logits_host_.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
  }
  if (o_.keep_activation_scales && is_fp8()) {  // strided on the device, packed on the host
    act_scales_host_.resize(act_amax_.size());
    CALIB_CUDA(cudaMemcpy2DAsync(act_scales_host_.data(), sizeof(float), act_scale_.get(),
                                 kFp8ScaleStride * sizeof(float), sizeof(float), act_scales_host_.size(),
                                 cudaMemcpyDeviceToHost, s));
  }
  CALIB_CUDA(cudaStreamSynchronize(s));
  float ms = 0;
  CALIB_CUDA(cudaEventElapsedTime(&ms, ev_start_.get(), ev_end_.get()));
  last_gpu_s_ = double(ms) * 1e-3;
  result_.assign(tokens_host_->get(), tokens_host_->get() + S);
}

void CudaModel::tune_gemms(int rows) {
  const WeightLayout& L = w_.layout();
  cudaStream_t s = stream_.get();
  // Random activations (never time zeros); the weights are the model's own.
  init_weights(x_.get(), std::int64_t(x_.size()), {0.0f, 1.0f}, 17, 1, s);
  init_weights(attn_.get(), std::int64_t(attn_.size()), {0.0f, 1.0f}, 17, 2, s);
  init_weights(act_.get(), std::int64_t(act_.size()), {0.0f, 1.0f}, 17, 3, s);
  init_weights(xs_.get(), std::int64_t(xs_.size()), {0.0f, 1.0f}, 17, 4, s);
  auto one = [&](const bf16* X, const TensorSlot& W, void* Y, int m, bool f32) {
    std::pair<double, double> t;
    if (is_fp8() && !f32) {
      // The E4M3 input of these random activations, with layer 0's slots as scratch.
      float* amax = act_amax_.get();
      float* scale = act_scale_.get();
      CALIB_CUDA(cudaMemsetAsync(amax, 0, sizeof(float), s));
      amax_bf16(X, m, W.cols, nullptr, amax, s);
      quantize_fp8(X, std::int64_t(m) * W.cols, amax, x8_.get(), scale, s);
      t = gemm_.tune_fp8(x8_.get(), scale, w_.fp8_at(W), w_.fp8_scale(W), static_cast<bf16*>(Y), m,
                         int(W.rows), int(W.cols), s);
    } else {
      t = gemm_.tune(X, w_.at(W), Y, m, int(W.rows), int(W.cols), f32, s);
    }
    ++stats_.tuned_gemms;
    stats_.tuned_heuristic_s += t.first;
    stats_.tuned_best_s += t.second;
  };
  one(x_.get(), L.layer(0, LayerTensor::Qkv), qkv_.get(), rows, false);
  one(attn_.get(), L.layer(0, LayerTensor::O), delta_.get(), rows, false);
  one(x_.get(), L.layer(0, LayerTensor::GateUp), gu_.get(), rows, false);
  one(act_.get(), L.layer(0, LayerTensor::Down), delta_.get(), rows, false);
  if (rows <= o_.max_seqs) one(xs_.get(), L.lm_head(), logits_.get(), rows, true);
  synchronize();
}

void CudaModel::enable_autotune() {
  o_.autotune_gemms = true;
  graphs_.clear();
  warm_up();
}

std::unique_ptr<CudaModel::Graph> CudaModel::capture(int B) {
  const LlamaConfig& c = config();
  if (o_.autotune_gemms) tune_gemms(B);
  const GemmInput in = is_fp8() ? GemmInput::FP8 : GemmInput::BF16;
  for (auto [n, k] : {std::pair{c.qkv_dim(), c.hidden}, std::pair{c.hidden, c.q_dim()},
                      std::pair{2 * c.ffn, c.hidden}, std::pair{c.hidden, c.ffn}})
    gemm_.prepare(B, n, k, false, in);
  gemm_.prepare(B, c.vocab, c.hidden, true);
  const Offsets base = offsets(B, B, 0, B, 0);
  // An uncaptured run first: lazy module loading and kernel attributes happen outside the capture.
  forward(base, B, B, 0, B, 0);
  CALIB_CUDA(cudaStreamSynchronize(stream_.get()));
  cudaGraph_t g = nullptr;
  CALIB_CUDA(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeRelaxed));
  try {
    forward(base, B, B, 0, B, 0);
  } catch (...) {
    cudaStreamEndCapture(stream_.get(), &g);
    if (g) cudaGraphDestroy(g);
    throw;
  }
  CALIB_CUDA(cudaStreamEndCapture(stream_.get(), &g));
  std::unique_ptr<Graph> exec;
  try {
    exec = std::make_unique<Graph>(g);
  } catch (...) {
    cudaGraphDestroy(g);
    throw;
  }
  cudaGraphDestroy(g);
  ++stats_.graph_captures;
  return exec;
}

void CudaModel::warm_up() {
  // An eager prefill step (every kernel of that path) and every decode graph, on padding rows
  // that read the scratch block and write nothing.
  StepPlan p;
  p.block_size = kBlockSize;
  p.max_blocks_per_seq = mb_;
  const int q = std::min(o_.max_tokens, 64);
  p.prefill_cu = {0, q};
  p.prefill_start = {0};
  p.prefill_kv = {q};
  p.prefill_tables.assign(std::size_t(mb_), scratch_block());
  p.max_prefill_q = q;
  for (int i = 0; i < q; ++i) {
    p.tokens.push_back(i % config().vocab);
    p.positions.push_back(i);
    p.slots.push_back(-1);
  }
  p.sample_rows = {q - 1};
  if (o_.autotune_gemms) tune_gemms(o_.max_tokens);
  run(p);
  // Every 64-row bucket of every weight asked of cuBLASLt's heuristic now (~0.5 ms each), not at
  // the first mixed step that brings its row count.
  {
    const WeightLayout& L = w_.layout();
    const GemmInput in = is_fp8() ? GemmInput::FP8 : GemmInput::BF16;
    for (LayerTensor t : {LayerTensor::Qkv, LayerTensor::O, LayerTensor::GateUp, LayerTensor::Down}) {
      const TensorSlot& W = L.layer(0, t);
      stats_.bucket_queries += gemm_.warm_buckets(int(W.rows), int(W.cols), false, o_.max_tokens, in);
    }
    const TensorSlot& head = L.lm_head();
    stats_.bucket_queries += gemm_.warm_buckets(int(head.rows), int(head.cols), true, o_.max_seqs);
  }
  if (!o_.cuda_graphs) return;
  for (int B : graph_sizes_) {
    if (graphs_.count(B)) continue;
    StepPlan d;
    d.block_size = kBlockSize;
    d.max_blocks_per_seq = mb_;
    pad_decode_plan(d, B, scratch_block());
    pack(d, offsets(B, B, 0, B, 0), 0);
    graphs_.emplace(B, capture(B));
  }
  synchronize();
}

const std::vector<std::int32_t>& CudaModel::run(StepPlan& p) {
  const int T = p.rows(), D = p.num_decode, P = p.num_prefill(), S = int(p.sample_rows.size());
  if (T <= 0) throw std::logic_error("CudaModel::run: an empty step");
  if (T > o_.max_tokens || D > o_.max_seqs || P > o_.max_seqs || S > o_.max_seqs ||
      int(p.copies.size()) > o_.max_seqs)
    throw std::logic_error("CudaModel::run: a step of " + std::to_string(T) + " rows / " +
                           std::to_string(D + P) + " sequences exceeds the model's max_tokens " +
                           std::to_string(o_.max_tokens) + " / max_seqs " + std::to_string(o_.max_seqs));
  if (p.max_blocks_per_seq != mb_)
    throw std::logic_error("CudaModel::run: plan built for another table width");
  const bool graph =
      !marks_on_ && o_.cuda_graphs && P == 0 && S == D && !graph_sizes_.empty() && D <= graph_sizes_.back();
  if (marks_on_) calib::wait_kernel(5000000, 1, stream_.get());  // the host queues the step ahead
  if (!graph) {
    fp8_io_.clear();
    const Offsets off = offsets(T, D, P, S, int(p.copies.size()));
    pack(p, off, T);
    forward(off, T, D, P, S, p.max_prefill_q);
    ++stats_.eager_steps;
    finish(S);
    return result_;
  }
  const int B = *std::lower_bound(graph_sizes_.begin(), graph_sizes_.end(), D);
  pad_decode_plan(p, B, scratch_block());
  const Offsets base = offsets(B, B, 0, B, 0);
  Offsets off = base;
  off.copies = base.total;  // the graph's arrays keep the layout it was captured with
  off.total = base.total + 2 * int(p.copies.size());
  pack(p, off, D);
  auto it = graphs_.find(B);
  if (it == graphs_.end()) it = graphs_.emplace(B, capture(B)).first;
  it->second->launch(stream_.get());
  ++stats_.graph_steps;
  finish(B);
  return result_;
}

}  // namespace infraplan::engine
