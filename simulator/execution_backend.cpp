#include "simulator/execution_backend.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "hardware/clocked_cost_model.hpp"
#include "simulator/sequence.hpp"

namespace infraplan::sim::serve {

double AlphaBetaTpComm::all_reduce_seconds(double bytes, int n) const {
  if (n <= 1 || bytes <= 0) return 0;
  const double steps = 2.0 * double(n - 1);
  return base_ + steps * step_ + steps / double(n) * bytes / (GBps_ * 1e9 * eff_);
}

SimulatedBackend::SimulatedBackend(const model::ModelSpec& m, const strat::ServingConfig& s,
                                   const hw::CostModel& cm, const TpCommModel* comm, BackendOptions o)
    : m_(m), s_(s), cm_(cm), comm_(comm), o_(o) {
  tp_heads_ = std::max<std::int64_t>(1, m_.heads / s_.tp);
  tp_kv_heads_ = m_.mla.enabled() ? 1 : std::max<std::int64_t>(1, m_.kv_heads / s_.tp);
  if (const hw::Profile* p = cm_.measured_profile(); p && p->serving_attention)
    decode_tile_tokens_ = p->serving_attention->decode_tile_tokens;
  if (o_.power_limited && cm_.has_power_limiter() && cm_.reference_clock_mhz() > 0)
    limiter_.emplace(cm_.power_model()->limit_w(),
                     cm_.idle_power_w() > 0 ? cm_.idle_power_w() : 0.15 * cm_.power_model()->limit_w(),
                     cm_.power_limiter_tau_s());
  use_clock(0);
}

void SimulatedBackend::use_clock(double mhz) {
  const int key = int(std::lround(mhz));
  auto [it, fresh] = pricing_.try_emplace(key);
  if (fresh) {
    if (key > 0) it->second.clocked = std::make_unique<hw::ClockedCostModel>(cm_, double(key));
    it->second.cm = key > 0 ? it->second.clocked.get() : &cm_;
  }
  cur_ = &it->second;
}

double SimulatedBackend::weight_gemm_seconds(std::int64_t m, std::int64_t n, std::int64_t k) const {
  m = std::max<std::int64_t>(m, 1);
  n = std::max<std::int64_t>(n, 1);
  k = std::max<std::int64_t>(k, 1);
  const Dtype d = strat::gemm_dtype(s_.weights);
  hw::GemmShape g{m, n, k, d, 1};
  const hw::CostModel& cm_ = *cur_->cm;
  if (d != Dtype::INT4) return cm_.gemm(g).seconds;
  // W4A16: weights stream at 0.5 B (+ group scales) and are dequantised on chip to fp16; the
  // math runs on the 16-bit tensor cores and the dequantisation costs extra issue slots.
  const double t = cm_.gemm(g).seconds;
  const auto fp16 = cm_.gpu().peak(Dtype::FP16);
  if (!fp16) return t;
  const double compute = o_.w4a16_dequant_factor * g.flops() / *fp16 + cm_.launch_overhead_seconds();
  return std::max(t, compute);
}

bool SimulatedBackend::eight_bit_weights() const {
  const Dtype d = strat::gemm_dtype(s_.weights);
  return d == Dtype::FP8 || d == Dtype::INT8;
}

double SimulatedBackend::kernel_seconds(double bytes) const {
  const hw::CostModel& cm_ = *cur_->cm;
  return std::max(cm_.memory_bound_queued(bytes).seconds, cm_.graph_kernel_seconds());
}

double SimulatedBackend::row_kernel_seconds(const char* kind, double rows, double width, double bytes) const {
  if (auto t = cur_->cm->row_kernel_seconds(kind, rows, width)) return *t;
  return kernel_seconds(bytes);
}

const SimulatedBackend::Dense& SimulatedBackend::dense(std::int64_t T) {
  auto it = cur_->dense_cache.find(T);
  if (it != cur_->dense_cache.end()) return it->second;
  const hw::CostModel& cm_ = *cur_->cm;
  Dense d;
  const LayerKernels& k = o_.engine.layer;
  const std::int64_t h = m_.hidden, tp = s_.tp;
  const std::int64_t qd = m_.q_dim(),
                     kvd = m_.mla.enabled() ? m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim : m_.kv_dim();
  const bool swiglu = m_.ffn_type == model::FfnType::SwiGLU;
  // Attention projections: QKV (fused or three GEMMs), O.
  double attn = weight_gemm_seconds(T, h, qd / tp);
  if (k.qkv_gemms >= 3)
    attn += weight_gemm_seconds(T, qd / tp, h) + 2.0 * weight_gemm_seconds(T, kvd / tp, h);
  else
    attn += weight_gemm_seconds(T, (qd + 2 * kvd) / tp, h);
  const int attn_gemms = (k.qkv_gemms >= 3 ? 3 : 1) + 1;
  // FFN: up (and gate, fused or not), down.
  auto ffn = [&](std::int64_t width, std::int64_t rows, std::int64_t split) {
    double t = weight_gemm_seconds(rows, h, width / split);
    if (swiglu && k.gate_up_gemms >= 2)
      t += 2.0 * weight_gemm_seconds(rows, width / split, h);
    else
      t += weight_gemm_seconds(rows, (swiglu ? 2 : 1) * width / split, h);
    return t;
  };
  const int ffn_gemms = (swiglu && k.gate_up_gemms >= 2 ? 2 : 1) + 1;
  const double dense_ffn = ffn(m_.ffn_hidden, T, tp);
  double moe_ffn = 0;
  int moe_gemms = 0;
  if (m_.moe.enabled()) {
    const std::int64_t ep = s_.ep, split = ep > 1 ? 1 : tp;
    const double experts_here = double(m_.moe.experts) / double(ep);
    const double p_hit = 1.0 - std::pow(1.0 - double(m_.moe.top_k) / double(m_.moe.experts), double(T));
    const double active = std::max(1.0, experts_here * p_hit);
    const double rows = double(T) * double(m_.moe.top_k) / double(ep);
    const std::int64_t per_expert = std::max<std::int64_t>(1, std::int64_t(std::ceil(rows / active)));
    moe_ffn = active * ffn(m_.moe.expert_ffn_hidden, per_expert, split);
    moe_gemms = int(std::ceil(active)) * ffn_gemms + 1;
    if (m_.moe.shared_experts > 0) {
      moe_ffn += ffn(m_.moe.expert_ffn_hidden * m_.moe.shared_experts, T, tp);
      moe_gemms += ffn_gemms;
    }
    moe_ffn += cm_.gemm({T, m_.moe.experts, h, Dtype::BF16, 1}).seconds;  // router
  }
  const double L = double(m_.layers), Lmoe = double(m_.moe_layers());
  d.gemm = (L * attn + (L - Lmoe) * dense_ffn + Lmoe * moe_ffn) / L;
  {  // matmul work and operand bytes per layer (MoE layers: the routed tokens' share of the experts)
    const double wb = dtype_bytes(strat::gemm_dtype(s_.weights)), Tf = double(T), hf = double(h);
    auto work = [&](double rows, double n, double depth, double times) {
      d.flops += times * 2.0 * rows * n * depth;
      d.gemm_bytes += times * (n * depth * wb + rows * (n + depth) * 2.0);
    };
    work(Tf, double(qd + 2 * kvd) / double(tp), hf, 1);
    work(Tf, hf, double(qd) / double(tp), 1);
    const double dense_share = (L - Lmoe) / L, moe_share = Lmoe / L;
    const double ffn_w = double(m_.ffn_hidden) / double(tp), up = swiglu ? 2.0 : 1.0;
    work(Tf, up * ffn_w, hf, dense_share);
    work(Tf, hf, ffn_w, dense_share);
    if (m_.moe.enabled()) {
      const double rows = Tf * double(m_.moe.top_k), ew = double(m_.moe.expert_ffn_hidden) / double(s_.ep > 1 ? 1 : tp);
      work(rows / double(std::max<std::int64_t>(1, s_.ep)), up * ew, hf, moe_share);
      work(rows / double(std::max<std::int64_t>(1, s_.ep)), hf, ew, moe_share);
    }
  }
  d.launches = int(std::lround((L * attn_gemms + (L - Lmoe) * ffn_gemms + Lmoe * moe_gemms) / L));
  // Memory-bound kernels, each at its own GPU time (bf16 activations, bytes read + written).
  const double Td = double(T), act = 2.0;
  const double ffn_width =
      double((m_.moe.enabled() ? m_.moe.expert_ffn_hidden * m_.moe.top_k : m_.ffn_hidden) / tp);
  const double kv_elem = dtype_bytes(s_.kv_dtype);
  // Fused norms, RoPE and SwiGLU run one block per token in every engine here (vLLM's csrc
  // layernorm_kernels.cu and pos_encoding_kernels.cu launch grid(num_tokens) as ours do): at small
  // batches they are latency-bound, priced from the measured serving_kernels table when the
  // profile has one. Unfused variants (several launches each) are framework elementwise kernels,
  // priced by their bytes.
  const double hw = double(h);
  if (k.residual_in_norm)
    d.memory += k.norms * row_kernel_seconds("add_rmsnorm", Td, hw, Td * hw * act * 4.0);
  else
    d.memory += k.norms * kernel_seconds(Td * hw * act * 2.0) + 2.0 * kernel_seconds(Td * hw * act * 3.0);
  const double rope_bytes = Td * double(qd + kvd) / double(tp) * act * 2.0;
  d.memory += k.rope == 1 ? row_kernel_seconds("rope_kv_write", Td, double(qd + 2 * kvd) / double(tp), rope_bytes)
                          : k.rope * kernel_seconds(rope_bytes);
  d.memory += k.kv_write * kernel_seconds(Td * 2.0 * double(kvd) / double(tp) * (act + kv_elem));
  const double act_bytes = Td * ffn_width * act * (swiglu ? 3.0 : 2.0);
  d.memory += swiglu && k.activation == 1 ? row_kernel_seconds("swiglu", Td, ffn_width, act_bytes)
                                           : k.activation * kernel_seconds(act_bytes);
  d.launches += k.memory_kernels();
  d.memory_bytes = k.norms * Td * hw * act * 4.0 + rope_bytes + Td * 2.0 * double(kvd) / double(tp) * (act + kv_elem) +
                   act_bytes;
  // W8A8: the GEMM inputs quantized at every step (dynamic scales), each launch priced by its
  // bytes (a bf16 read and an 8-bit write of the layer's average GEMM input) at least a kernel's
  // floor; at decode batches the floor is what counts.
  if (eight_bit_weights() && k.activation_quant > 0) {
    const double width = (2.0 * hw + double(qd) / double(tp) + ffn_width) / 4.0;
    const double qbytes = Td * width * (act + 1.0);
    d.memory += k.activation_quant * kernel_seconds(qbytes);
    d.memory_bytes += k.activation_quant * qbytes;
    d.launches += k.activation_quant;
  }
  if (comm_ && tp > 1) {
    d.comm = 2.0 * comm_->all_reduce_seconds(2.0 * double(T * h), int(tp));
    d.launches += 2;
  }
  if (comm_ && s_.pp > 1)
    d.comm += double(s_.pp - 1) * comm_->all_reduce_seconds(2.0 * double(T * h), 2) / 2.0 / L;
  return cur_->dense_cache.emplace(T, d).first->second;
}

double SimulatedBackend::dense_layer_seconds(std::int64_t tokens) {
  const Dense& d = dense(tokens);
  return d.gemm + d.comm + d.memory;
}

const SimulatedBackend::Head& SimulatedBackend::head(std::int64_t T, std::int64_t rows) {
  const std::int64_t key = (T << 32) ^ rows;
  auto it = cur_->head_cache.find(key);
  if (it != cur_->head_cache.end()) return it->second;
  const hw::CostModel& cm_ = *cur_->cm;
  Head hd;
  const double h = double(m_.hidden);
  hd.memory = kernel_seconds(double(T) * h * 2.0 * 2.0);   // embedding gather
  hd.memory += row_kernel_seconds("add_rmsnorm", double(T), h, double(T) * h * 2.0 * 2.0);  // final norm
  hd.launches = 2;
  if (rows > 0) {
    hd.gemm =
        cm_.gemm({rows, std::max<std::int64_t>(1, m_.vocab / s_.tp), m_.hidden, Dtype::BF16, 1}).seconds;
    // Sampling: each kernel passes over the fp32 logits (cast, softmax / top-k / top-p, argmax).
    const double logits_bytes = double(rows) * double(m_.vocab) * 4.0;
    const double vocab = double(std::max<std::int64_t>(1, m_.vocab / s_.tp));
    hd.flops = 2.0 * double(rows) * vocab * h;
    hd.gemm_bytes = vocab * h * 2.0 + double(rows) * (vocab + h) * 2.0;
    hd.memory_bytes = logits_bytes * 2.0;
    if (o_.engine.argmax_sampling && o_.engine.sampling_kernels >= 1)  // the engine's own argmax kernel
      hd.memory += row_kernel_seconds("argmax", double(rows), double(m_.vocab), logits_bytes) +
                   (o_.engine.sampling_kernels - 1) * kernel_seconds(logits_bytes * 2.0);
    else
      hd.memory += o_.engine.sampling_kernels * kernel_seconds(logits_bytes * 2.0);
    hd.launches += 1 + o_.engine.sampling_kernels;
    if (comm_ && s_.tp > 1) {
      hd.comm = comm_->all_reduce_seconds(double(rows) * double(m_.vocab / s_.tp) * 2.0, s_.tp) / 2.0;
      hd.launches += 1;
    }
  }
  hd.memory_bytes += double(T) * h * 2.0 * 4.0;
  return cur_->head_cache.emplace(key, hd).first->second;
}

double SimulatedBackend::chunk_by_chunk_prefill_seconds(const hw::AttentionPrefillLaunch& l) {
  double sum = 0;
  for (const auto& [q, cached] : l.chunks) {
    const std::int64_t context = q + cached, key = (q << 32) ^ context;
    auto f = cur_->prefill_attn_cache.find(key);
    if (f != cur_->prefill_attn_cache.end()) {
      sum += f->second;
      continue;
    }
    hw::AttentionPrefillShape p{1, q, context, l.heads, l.kv_heads, l.head_dim, true, l.dtype};
    const double a = cur_->cm->attention_prefill(p).seconds;
    if (cur_->prefill_attn_cache.size() < 200000) cur_->prefill_attn_cache.emplace(key, a);
    sum += a;
  }
  return sum;
}

double SimulatedBackend::host_seconds(const BatchShape& b) const {
  return (o_.engine.host_step_us + o_.engine.host_seq_us * double(b.items.size() + b.padding_seqs)) * 1e-6;
}

StepCost SimulatedBackend::price(const BatchShape& b, Work& work) {
  const hw::CostModel& cm_ = *cur_->cm;
  StepCost c;
  std::int64_t T = b.padding_seqs, rows = b.padding_seqs, decodes = b.padding_seqs;
  std::int64_t decode_ctx = b.padding_context, q_max = 1, prefills = 0;
  // The engine's own attention kernels widen an fp8 cache's tiles to bf16 in shared memory and
  // compute in bf16 (engine/paged_prefill_attention.cu, calib_kernels/decode_attention.cu): they
  // take the bf16 cache's time, not half of it (measured on the H200: decode at batch 64 257 µs
  // per layer with fp8 KV, 250 µs with bf16; an 8,192-token prefill 230.9 vs 230.6 ms;
  // docs/serving.md "fp8 KV cache"). Other engines' fp8 kernels are priced by their bytes and
  // fp8 FLOPs. The cache's HBM traffic (work.bytes, the board's draw) is the fp8 bytes either way.
  const bool widened_fp8_kv = s_.kv_dtype == Dtype::FP8 && o_.engine.own_paged_attention;
  const Dtype attn_dtype = s_.kv_dtype == Dtype::FP8 && !widened_fp8_kv ? Dtype::FP8 : Dtype::BF16;
  const std::int64_t head_dim =
      m_.mla.enabled() ? m_.mla.kv_lora_rank + m_.mla.qk_rope_head_dim : m_.head_dim;
  const double L = double(m_.layers);
  double attn_layer = 0;  // one layer's attention kernels, seconds
  hw::AttentionPrefillLaunch launch{{}, tp_heads_, tp_kv_heads_, head_dim, attn_dtype};
  // Decodes whose sequences share prefix blocks (prefix caching) read those blocks once: each
  // distinct shared prefix (by its first block) counted once, at the longest share of it.
  std::vector<std::pair<std::int32_t, std::int64_t>> shared_ids;  // {first block, shared blocks}
  std::int64_t shared_tokens = 0, block_size = 16;
  // The engine's decode kernel walks each sequence's context in whole tiles: the keys that would
  // fill each last tile (priced by the profile's measured partial-tile share).
  const std::int64_t tile = o_.engine.own_paged_attention ? decode_tile_tokens_ : 0;
  std::int64_t tile_padding = 0;
  for (const BatchItem& it : b.items) {
    T += it.q_tokens;
    if (it.samples) rows += it.prefill ? 1 : it.q_tokens;
    if (it.prefill) {
      ++prefills;
      launch.chunks.push_back({it.q_tokens, std::max<std::int64_t>(0, it.context - it.q_tokens)});
      // QKᵀ and PV over the chunk's causal keys, and its q, k, v read once.
      const double q = double(it.q_tokens), keys = double(it.context - it.q_tokens) + 0.5 * (q + 1.0);
      work.flops += L * 4.0 * q * keys * double(tp_heads_ * head_dim);
      work.bytes += L * 2.0 * double(it.context) * double(tp_kv_heads_ * head_dim) * dtype_bytes(s_.kv_dtype);
    } else {
      ++decodes;
      decode_ctx += it.context;
      if (tile > 0) tile_padding += (tile - it.context % tile) % tile;
      q_max = std::max(q_max, it.q_tokens);
      if (it.seq && it.seq->shared_blocks > 0) {
        const std::int64_t n = std::min<std::int64_t>(it.seq->shared_blocks, std::int64_t(it.seq->block_table.size()));
        if (n > 0) shared_ids.emplace_back(it.seq->block_table.front(), n);
        block_size = it.seq->block_size();
        shared_tokens += std::min(it.context, n * block_size);
      }
    }
  }
  if (prefills > 0) {
    // One launch for every chunk where the profile measured the engine's kernel that way, else
    // each chunk from the attention-prefill tables.
    const auto l = o_.engine.own_paged_attention ? cm_.attention_prefill_launch(launch) : std::nullopt;
    attn_layer += l ? l->seconds : chunk_by_chunk_prefill_seconds(launch);
  }
  if (decodes > 0) {
    hw::AttentionDecodeShape d{decodes, decode_ctx, tp_heads_ * q_max, tp_kv_heads_, head_dim,
                               widened_fp8_kv ? Dtype::BF16 : s_.kv_dtype};
    d.engine_kernel = o_.engine.own_paged_attention;
    d.tile_padding_tokens = tile_padding;
    if (!shared_ids.empty()) {
      std::sort(shared_ids.begin(), shared_ids.end());
      std::int64_t distinct = 0;
      for (std::size_t i = 0; i < shared_ids.size(); ++i)
        if (i + 1 == shared_ids.size() || shared_ids[i + 1].first != shared_ids[i].first)
          distinct += shared_ids[i].second;  // the longest share of this prefix (sorted last)
      d.unique_context_tokens =
          std::clamp<std::int64_t>(decode_ctx - shared_tokens + std::int64_t(distinct) * block_size, 0, decode_ctx);
    }
    attn_layer += cm_.attention_decode(d).seconds;
    const double read = d.unique_context_tokens >= 0 ? double(d.unique_context_tokens) : double(decode_ctx);
    work.bytes += L * 2.0 * read * double(tp_kv_heads_ * head_dim) * dtype_bytes(s_.kv_dtype);
  }
  const int attn_launches = (prefills > 0 ? 1 : 0) + (decodes > 0 ? 1 : 0);
  // How the step is launched: a captured graph (decode-only steps, or all but attention with
  // piecewise graphs) at the captured size, padding rows included; otherwise eagerly.
  const CudaGraphs& g = o_.engine.graphs;
  const bool decode_only = prefills == 0;
  const int captured = decode_only || g.piecewise_mixed ? g.captured_size(T) : 0;
  const bool full_graph = captured > 0 && decode_only;
  const std::int64_t Tg = captured > 0 ? std::max<std::int64_t>(captured, T) : T;
  const std::int64_t rows_g = full_graph ? std::max<std::int64_t>(rows, Tg) : rows;
  c.graph_tokens = captured;
  if (T > 0) {
    const Dense& d = dense(Tg);
    const Head& hd = head(Tg, rows_g);
    c.gemm_s = L * d.gemm + hd.gemm;
    c.comm_s = L * d.comm + hd.comm;
    c.other_s = L * d.memory + hd.memory;
    c.attention_s = L * attn_layer;
    c.launches = int(L) * (d.launches + attn_launches) + hd.launches;
    work.flops += L * d.flops + hd.flops;
    work.bytes += L * d.gemm_bytes + hd.gemm_bytes;
    work.memory_bytes += L * d.memory_bytes + hd.memory_bytes;
    const double gpu_layer = d.gemm + d.comm + d.memory + attn_layer;
    const double issue = o_.engine.eager_issue == EagerIssue::Cuda ? cm_.launch_overhead_seconds()
                                                                   : cm_.framework_op_seconds();
    // Host time to issue one layer's kernels: nothing in a full graph; the layer's graph piece
    // and its eager attention in a piecewise step; every kernel in an eager step.
    double host_layer = 0, host_head = 0;
    if (full_graph) {
      host_layer = 0;
    } else if (captured > 0) {
      host_layer = cm_.launch_overhead_seconds() + attn_launches * issue;
      host_head = cm_.launch_overhead_seconds() + hd.launches * issue;
    } else {
      host_layer = (d.launches + attn_launches) * issue;
      host_head = hd.launches * issue;
    }
    const double head_gpu = hd.gemm + hd.comm + hd.memory;
    // Kernels issued eagerly wait a little longer for their predecessor than graph-replayed ones
    // (ceilings.eager_kernel_gap_us): every kernel of an eager step; in a piecewise step each
    // layer's eager attention and the graph piece after it. A layer then takes the longer of
    // the host's issue time and the GPU's time with those gaps.
    const double gap = full_graph ? 0.0 : cm_.eager_kernel_gap_seconds();
    const double gaps_layer = gap * (captured > 0 ? attn_launches + 1 : d.launches + attn_launches);
    const double gaps_head = gap * (captured > 0 ? 1 : hd.launches);
    c.launch_s = L * (std::max(host_layer, gpu_layer + gaps_layer) - gpu_layer) +
                 (std::max(host_head, head_gpu + gaps_head) - head_gpu);
    if (full_graph) c.launch_s = cm_.launch_overhead_seconds();  // one cudaGraphLaunch
  }
  // Host work of the step: scheduling, input preparation, output processing.
  const double host = host_seconds(b);
  const double gpu = c.gemm_s + c.attention_s + c.comm_s + c.other_s + c.launch_s;
  c.host_s = o_.engine.host_overlap ? std::max(0.0, host - gpu) : host;
  c.total_s = gpu + c.host_s;
  return c;
}

SimulatedBackend::TopClockWork SimulatedBackend::top_clock_work(const BatchShape& b) {
  const hw::PowerModel* law = cm_.power_model();
  if (!law) throw Error("top_clock_work: the cost model has no power law");
  Work work;
  use_clock(law->max_clock_mhz());
  const StepCost top = price(b, work);
  use_clock(0);
  return {top.total_s - top.host_s, work.flops, work.bytes, work.memory_bytes};
}

StepCost SimulatedBackend::step(const BatchShape& b) {
  Work work;
  if (!limiter_) {
    use_clock(0);
    return price(b, work);
  }
  // Under the power limiter: the step at the top clock, its draw there, and (when that is above
  // the limit) the step at the clock the law gives its work; the limiter says how much of it runs
  // at each. The host's share of the step and the time since the last one leave the GPU idle.
  const hw::PowerModel& law = *cm_.power_model();
  const double top_mhz = law.max_clock_mhz();
  use_clock(top_mhz);
  const StepCost top = price(b, work);
  const double top_gpu = top.total_s - top.host_s;
  hw::PowerDemand demand;
  if (top_gpu > 0) {
    (eight_bit_weights() ? demand.tflops8 : demand.tflops16) = work.flops / top_gpu * 1e-12;
    demand.TBps = work.bytes / top_gpu * 1e-12;
    demand.ew_TBps = work.memory_bytes / top_gpu * 1e-12;
  }
  if (o_.decode_draw && !o_.decode_draw->empty()) {
    // Decoding sequences draw what the held engine steps showed; prefill tokens the law's.
    double tokens = double(b.padding_seqs), decodes = double(b.padding_seqs);
    for (const BatchItem& it : b.items) {
      tokens += double(it.q_tokens);
      if (!it.prefill) decodes += 1;
    }
    if (decodes > 0 && tokens > 0) {
      demand = with_draw_scale(demand, 1.0 + (o_.decode_draw->at(decodes) - 1.0) * std::min(1.0, decodes / tokens));
    }
  }
  const double draw = law.power_w(demand, top_mhz);
  // The GPU's clock moves in 15 MHz steps: the capped clock rounded down to one.
  const double cap_mhz = std::max(15.0, std::floor(law.sustained_clock_mhz(demand) / 15.0) * 15.0);
  StepCost capped = top;
  if (cap_mhz < top_mhz) {
    Work ignored;
    use_clock(cap_mhz);
    capped = price(b, ignored);
  }
  if (b.start_s >= 0 && last_end_s_ >= 0) limiter_->idle(b.start_s - last_end_s_);
  const auto r = limiter_->run({draw, top_gpu, capped.total_s - capped.host_s});
  const double a = r.top_fraction;
  StepCost c = top;
  auto mix = [a](double x, double y) { return a * x + (1.0 - a) * y; };
  c.gemm_s = mix(top.gemm_s, capped.gemm_s);
  c.attention_s = mix(top.attention_s, capped.attention_s);
  c.comm_s = mix(top.comm_s, capped.comm_s);
  c.other_s = mix(top.other_s, capped.other_s);
  c.launch_s = mix(top.launch_s, capped.launch_s);
  const double gpu = c.gemm_s + c.attention_s + c.comm_s + c.other_s + c.launch_s;
  const double host = host_seconds(b);
  c.host_s = o_.engine.host_overlap ? std::max(0.0, host - gpu) : host;
  c.total_s = gpu + c.host_s;
  c.clock_mhz = mix(top_mhz, cap_mhz);
  limiter_->idle(c.host_s);
  if (b.start_s >= 0) last_end_s_ = b.start_s + c.total_s;
  else if (last_end_s_ >= 0) last_end_s_ += c.total_s;
  else last_end_s_ = c.total_s;
  use_clock(0);
  return c;
}

}  // namespace infraplan::sim::serve
