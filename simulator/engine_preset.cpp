#include "simulator/engine_preset.hpp"

#include <algorithm>

#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::sim::serve {

int CudaGraphs::captured_size(long long tokens) const {
  if (!enabled || sizes.empty() || tokens <= 0) return 0;
  if (padding) {
    auto it = std::lower_bound(sizes.begin(), sizes.end(), int(std::min<long long>(tokens, 1LL << 30)));
    return it == sizes.end() ? 0 : *it;
  }
  return std::binary_search(sizes.begin(), sizes.end(), int(std::min<long long>(tokens, 1LL << 30)))
             ? int(tokens)
             : 0;
}

std::vector<int> vllm_capture_sizes(int max_num_seqs) {
  const int top = std::min(2 * std::max(max_num_seqs, 1), 512);
  std::vector<int> s = {1, 2, 4};
  for (int b = 8; b < 256; b += 8) s.push_back(b);
  for (int b = 256; b <= top; b += 16) s.push_back(b);
  s.erase(std::remove_if(s.begin(), s.end(), [&](int b) { return b > top; }), s.end());
  return s;
}

namespace {

// SGLang's default capture sizes (python/sglang/srt/server_args.py): 1, 2, 4, 8, 12, multiples
// of 8 from 16 to 256, of 16 from 272 below 512, of 32 from 512, up to cuda_graph_max_bs.
std::vector<int> sglang_capture_sizes(int max_bs) {
  std::vector<int> s = {1, 2, 4, 8, 12};
  for (int b = 16; b <= 256; b += 8) s.push_back(b);
  for (int b = 272; b < 512; b += 16) s.push_back(b);
  for (int b = 512; b <= max_bs; b += 32) s.push_back(b);
  s.erase(std::remove_if(s.begin(), s.end(), [&](int b) { return b > max_bs; }), s.end());
  return s;
}

// TensorRT-LLM's PyTorch backend without padding (CudaGraphConfig, default max_batch_size 128):
// 1 … 31, 32, 64, 128.
std::vector<int> trtllm_capture_sizes() {
  std::vector<int> s;
  for (int b = 1; b <= 32; ++b) s.push_back(b);
  s.push_back(64);
  s.push_back(128);
  return s;
}

}  // namespace

const std::vector<std::string>& engine_preset_names() {
  static const std::vector<std::string> n = {"infraplan", "vllm", "tensorrt-llm", "sglang"};
  return n;
}

EnginePreset engine_preset(const std::string& name, int max_num_seqs, const std::string& field) {
  EnginePreset p;
  p.name = name;
  if (name == "infraplan") {
    // The project's mini-engine (issue 15): fused add+RMSNorm, fused QKV, RoPE fused with the
    // KV-cache write, fused gate/up, SwiGLU kernel; decode steps replay graphs; C++ host.
    p.layer = {2, true, 1, 1, 0, 1, 1};
    p.layer.activation_quant = 5;  // W8A8: engine/cuda_model.cpp, 4 quantize kernels + 1 amax reduction
    p.graphs.sizes = vllm_capture_sizes(max_num_seqs);
    p.eager_issue = EagerIssue::Cuda;
    p.sampling_kernels = 1;  // greedy argmax on the GPU
    p.argmax_sampling = true;
    p.own_paged_attention = true;
    // Measured host time per step (bench serve --steps on scenarios/calib_host_llama2_7b_h200.json,
    // two runs on the H200 machine, docs/serving.md "Host time"): 21 µs + 0.60 µs and 19 µs +
    // 0.88 µs per scheduled sequence over decode graph steps of 1-256 sequences.
    p.host_step_us = 20;
    p.host_seq_us = 0.74;
    return p;
  }
  if (name == "vllm") {
    // vLLM V1: vllm/model_executor/models/llama.py (fused_add_rms_norm, QKVParallelLinear, rotary
    // embedding, reshape_and_cache_flash + FlashAttention, MergedColumnParallelLinear, SiluAndMul);
    // CUDA graphs FULL_AND_PIECEWISE with the default capture sizes; eager parts from PyTorch.
    p.layer = {2, true, 1, 1, 1, 1, 1};
    p.graphs.sizes = vllm_capture_sizes(max_num_seqs);
    p.graphs.piecewise_mixed = true;
    p.eager_issue = EagerIssue::Framework;
    p.sampling_kernels = 2;  // greedy: logits to fp32, argmax (vllm/v1/sample/sampler.py)
    p.host_step_us = 160;    // vllm PR #11133: the step gap left with the scheduler overlapped
    p.host_seq_us = 21;      // vllm issue #10634: 5-6 ms between decode steps at 256 sequences
    p.host_overlap = false;  // --async-scheduling is opt-in (vllm PR #19970)
    return p;
  }
  if (name == "sglang") {
    // SGLang: python/sglang/srt/models/llama.py (same kernel structure as vLLM's); decode-only
    // graphs at its default capture sizes (cuda_graph_max_bs 256 below TP 4 on 80-160 GB GPUs);
    // overlap scheduler on by default since v0.4.
    p.layer = {2, true, 1, 1, 1, 1, 1};
    p.graphs.sizes = sglang_capture_sizes(256);
    p.eager_issue = EagerIssue::Framework;
    p.sampling_kernels = 2;
    p.host_step_us = 160;
    p.host_seq_us = 21;
    p.host_overlap = true;
    return p;
  }
  if (name == "tensorrt-llm") {
    // TensorRT-LLM (PyTorch backend): the attention op takes the fused QKV and applies RoPE and
    // the KV-cache append itself; fused add+RMSNorm; graphs for generation-only batches at exact
    // sizes (enable_padding false); overlap scheduler and GUARANTEED_NO_EVICT by default.
    p.layer = {2, true, 1, 0, 0, 1, 1};
    p.graphs.sizes = trtllm_capture_sizes();
    p.graphs.padding = false;
    p.eager_issue = EagerIssue::Framework;
    p.sampling_kernels = 1;
    p.host_step_us = 160;
    p.host_seq_us = 21;
    p.host_overlap = true;
    p.admission = Admission::Reserve;
    return p;
  }
  std::string valid;
  for (const auto& n : engine_preset_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw Error(field + "='" + name + "' is not a known engine; valid: " + valid);
}

EnginePreset engine_preset_from_json(const JsonObject& o, int max_num_seqs) {
  EnginePreset p = engine_preset(o.get_string("engine", "infraplan"), max_num_seqs, o.field("engine"));
  if (auto g = o.opt_object("cuda_graph")) {
    g->reject_unknown({"enabled", "sizes", "max_size", "padding", "piecewise_mixed"});
    p.graphs.enabled = g->get_bool("enabled", p.graphs.enabled);
    p.graphs.padding = g->get_bool("padding", p.graphs.padding);
    p.graphs.piecewise_mixed = g->get_bool("piecewise_mixed", p.graphs.piecewise_mixed);
    if (g->has("sizes")) {
      const Json& s = g->raw().at("sizes");
      if (!s.is_array() || s.empty())
        throw Error(g->field("sizes") +
                    ": expected a non-empty array of captured sizes (tokens, integers >= 1)");
      p.graphs.sizes.clear();
      for (const Json& v : s) {
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1 << 20))
          throw Error(g->field("sizes") + ": " + v.dump() +
                      " is not a captured size (an integer in 1..1048576)");
        p.graphs.sizes.push_back(v.get<int>());
      }
      std::sort(p.graphs.sizes.begin(), p.graphs.sizes.end());
      p.graphs.sizes.erase(std::unique(p.graphs.sizes.begin(), p.graphs.sizes.end()), p.graphs.sizes.end());
    }
    if (g->has("max_size")) {
      const long long top = g->get_int_min("max_size", 1, 1, 1 << 20);
      p.graphs.sizes.erase(
          std::remove_if(p.graphs.sizes.begin(), p.graphs.sizes.end(), [&](int b) { return b > top; }),
          p.graphs.sizes.end());
      if (p.graphs.sizes.empty())
        throw Error(g->field("max_size") + "=" + std::to_string(top) + " leaves no captured size");
    }
  }
  if (auto k = o.opt_object("kernels")) {
    k->reject_unknown({"norms", "residual_in_norm", "qkv_gemms", "rope", "kv_write", "gate_up_gemms",
                       "activation", "activation_quant", "sampling"});
    LayerKernels& l = p.layer;
    l.norms = int(k->get_int_min("norms", l.norms, 0, 64));
    l.residual_in_norm = k->get_bool("residual_in_norm", l.residual_in_norm);
    l.qkv_gemms = int(k->get_int_min("qkv_gemms", l.qkv_gemms, 1));
    if (l.qkv_gemms != 1 && l.qkv_gemms != 3)
      throw Error(k->field("qkv_gemms") + "=" + std::to_string(l.qkv_gemms) +
                  " is invalid; valid: 1 (fused), 3");
    l.rope = int(k->get_int_min("rope", l.rope, 0, 64));
    l.kv_write = int(k->get_int_min("kv_write", l.kv_write, 0, 64));
    l.gate_up_gemms = int(k->get_int_min("gate_up_gemms", l.gate_up_gemms, 1));
    if (l.gate_up_gemms != 1 && l.gate_up_gemms != 2)
      throw Error(k->field("gate_up_gemms") + "=" + std::to_string(l.gate_up_gemms) +
                  " is invalid; valid: 1 (fused), 2");
    l.activation = int(k->get_int_min("activation", l.activation, 0, 64));
    l.activation_quant = int(k->get_int_min("activation_quant", l.activation_quant, 0, 64));
    p.sampling_kernels = int(k->get_int_min("sampling", p.sampling_kernels, 0, 64));
  }
  if (o.has("eager_issue"))
    p.eager_issue = o.get_choice("eager_issue", "cuda", {"cuda", "framework"}) == "cuda"
                        ? EagerIssue::Cuda
                        : EagerIssue::Framework;
  p.host_step_us = o.get_number_min("host_overhead_us", p.host_step_us, 0, limits::kMaxHostOverheadUs);
  p.host_seq_us = o.get_number_min("host_us_per_seq", p.host_seq_us, 0, limits::kMaxHostOverheadUs);
  p.host_overlap = o.get_bool("host_overlap", p.host_overlap);
  const std::string adm = o.get_choice("admission", admission_name(p.admission), {"on_demand", "reserve"});
  p.admission = adm == "reserve" ? Admission::Reserve : Admission::OnDemand;
  return p;
}

Json EnginePreset::to_json() const {
  return {{"name", name},
          {"layer_kernels",
           {{"norms", layer.norms},
            {"residual_in_norm", layer.residual_in_norm},
            {"qkv_gemms", layer.qkv_gemms},
            {"rope", layer.rope},
            {"kv_write", layer.kv_write},
            {"gate_up_gemms", layer.gate_up_gemms},
            {"activation", layer.activation},
            {"activation_quant", layer.activation_quant}}},
          {"cuda_graph",
           {{"enabled", graphs.enabled},
            {"sizes", graphs.sizes},
            {"padding", graphs.padding},
            {"piecewise_mixed", graphs.piecewise_mixed}}},
          {"eager_issue", eager_issue == EagerIssue::Cuda ? "cuda" : "framework"},
          {"sampling_kernels", sampling_kernels},
          {"host_overhead_us", host_step_us},
          {"host_us_per_seq", host_seq_us},
          {"host_overlap", host_overlap},
          {"admission", admission_name(admission)}};
}

}  // namespace infraplan::sim::serve
