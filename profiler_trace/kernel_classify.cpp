#include "profiler_trace/kernel_classify.hpp"

#include "profiler_trace/composites.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace infraplan::ptrace {

const char* category_name(KernelCategory c) {
  switch (c) {
    case KernelCategory::Gemm:
      return "gemm";
    case KernelCategory::Attention:
      return "attention";
    case KernelCategory::Norm:
      return "norm";
    case KernelCategory::Elementwise:
      return "elementwise";
    case KernelCategory::Optimizer:
      return "optimizer";
    case KernelCategory::Copy:
      return "copy";
    case KernelCategory::Communication:
      return "communication";
    case KernelCategory::Other:
      return "other";
  }
  return "?";
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Forward:
      return "forward";
    case Phase::Backward:
      return "backward";
    case Phase::Recompute:
      return "recompute";
    case Phase::Optimizer:
      return "optimizer";
  }
  return "?";
}

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// "aten::_to_copy" -> "_to_copy"; other namespaces stay.
std::string base_name(const std::string& op) { return starts_with(op, "aten::") ? op.substr(6) : op; }

int dtype_rank(const std::string& d) {
  static const std::vector<std::string> order = {"f32", "bf16", "f16", "f64", "fp8e4m3", "fp8e5m2"};
  auto it = std::find(order.begin(), order.end(), d);
  return it == order.end() ? 100 : int(it - order.begin());
}

bool is_float(const std::string& d) { return dtype_rank(d) < 100; }

/// Distinct floating dtypes of the tensor inputs, f32 first ("f32_bf16"); integer index tensors
/// are left out unless nothing else is there.
std::string dtypes_key(const TraceEvent& ev) {
  std::vector<std::string> fl, other;
  for (const auto& in : ev.inputs) {
    if (in.shapes.empty()) continue;
    std::string d = short_dtype(in.type);
    if (d.empty()) continue;
    auto& v = is_float(d) ? fl : other;
    if (std::find(v.begin(), v.end(), d) == v.end()) v.push_back(d);
  }
  auto& v = fl.empty() ? other : fl;
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
    return dtype_rank(a) != dtype_rank(b) ? dtype_rank(a) < dtype_rank(b) : a < b;
  });
  std::string key;
  for (const auto& d : v) key += (key.empty() ? "" : "_") + d;
  return key.empty() ? "na" : key;
}

std::string dtype_of(const TraceEvent& ev, std::size_t i) {
  if (i >= ev.inputs.size()) return "";
  return short_dtype(ev.inputs[i].type);
}

double numel(const TraceEvent& ev, std::size_t i) {
  return i < ev.inputs.size() ? ev.inputs[i].elements() : 0;
}

double max_numel(const TraceEvent& ev) {
  double m = 0;
  for (const auto& in : ev.inputs)
    if (in.shapes.size() == 1) m = std::max(m, in.elements());
  return m;
}

/// c10::ScalarType numbers as "Concrete Inputs" print them.
std::string scalar_type_name(const std::string& concrete) {
  static const std::map<std::string, std::string> names = {
      {"0", "u8"},  {"1", "i8"},  {"2", "i16"},   {"3", "i32"},   {"4", "i64"},      {"5", "f16"},
      {"6", "f32"}, {"7", "f64"}, {"11", "bool"}, {"15", "bf16"}, {"23", "fp8e5m2"}, {"24", "fp8e4m3"}};
  auto it = names.find(concrete);
  return it == names.end() ? "" : it->second;
}

bool is_gemm_op(const std::string& b) {
  return b == "mm" || b == "addmm" || b == "bmm" || b == "baddbmm" || b == "_scaled_mm" || b == "matmul" ||
         b == "addmv" || b == "mv" || b == "_addmm_activation";
}

bool is_attention_op(const std::string& b) {
  return starts_with(b, "_scaled_dot_product_") || b == "scaled_dot_product_attention" ||
         starts_with(b, "_flash_attention_") || starts_with(b, "_efficient_attention_") ||
         starts_with(b, "_cudnn_attention");
}

/// An SDPA backend op (flash, efficient, cuDNN, math): kernels under it are the attention's own.
/// Kernels under aten::scaled_dot_product_attention but outside a backend op are the casts and
/// copies autocast and the dispatcher run before it.
bool is_attention_backend_op(const std::string& b) {
  return is_attention_op(b) && b != "scaled_dot_product_attention";
}

bool is_composite(const std::string& b) {
  return b == "rms_norm" || b == "layer_norm" || b == "group_norm" || b == "cross_entropy_loss" ||
         b == "embedding";
}

/// True for GPU work that is collective communication.
bool is_nccl(const std::string& kernel) {
  return starts_with(kernel, "nccl") || contains(kernel, "ncclDevKernel");
}

bool transposed(const OpInput& in) {
  if (in.shapes.size() != 1 || in.strides.size() != 1) return false;
  const auto& s = in.strides[0];
  if (s.size() < 2) return false;
  const auto sr = s[s.size() - 2], sc = s[s.size() - 1];
  return sc != 1 && sr == 1;
}

/// The attention call of an SDPA-family op; nullopt when its shapes are missing.
std::optional<AttentionCall> attention_of(const TraceEvent& ev) {
  const std::string b = base_name(ev.name);
  const bool bwd = contains(b, "backward");
  const std::size_t q = bwd ? 1 : 0;
  if (ev.inputs.size() < q + 2 || ev.inputs[q].shapes.size() != 1 || ev.inputs[q + 1].shapes.size() != 1)
    return std::nullopt;
  const auto& qs = ev.inputs[q].shapes[0];
  const auto& ks = ev.inputs[q + 1].shapes[0];
  if (qs.size() != 4 || ks.size() != 4) return std::nullopt;
  AttentionCall a;
  a.batch = qs[0], a.heads = qs[1], a.q_len = qs[2], a.head_dim = qs[3];
  a.kv_heads = ks[1], a.kv_len = ks[2];
  a.backward = bwd;
  a.dtype = dtype_of(ev, q);
  if (contains(b, "flash"))
    a.backend = "flash";
  else if (contains(b, "efficient"))
    a.backend = "efficient";
  else if (contains(b, "cudnn"))
    a.backend = "cudnn";
  else if (contains(b, "math"))
    a.backend = "math";
  // is_causal's position in each signature (native_functions.yaml).
  int causal_at = -1;
  if (b == "scaled_dot_product_attention")
    causal_at = 5;
  else if (b == "_scaled_dot_product_flash_attention")
    causal_at = 4;
  else if (b == "_scaled_dot_product_efficient_attention" || b == "_scaled_dot_product_cudnn_attention")
    causal_at = 6;
  else if (b == "_scaled_dot_product_flash_attention_backward" ||
           b == "_scaled_dot_product_efficient_attention_backward")
    causal_at = 11;
  else if (b == "_scaled_dot_product_cudnn_attention_backward")
    causal_at = 14;
  if (causal_at >= 0 && std::size_t(causal_at) < ev.inputs.size()) {
    const std::string& c = ev.inputs[std::size_t(causal_at)].concrete;
    if (c == "True" || c == "False") a.causal = c == "True";
  }
  return a;
}

bool is_backward_node(const std::string& name) {
  return starts_with(name, "autograd::engine::evaluate_function") || contains(name, "Backward");
}

}  // namespace

std::optional<GemmCall> gemm_of(const TraceEvent& ev) {
  const std::string b = base_name(ev.name);
  std::size_t ia = 0, ib = 1;
  if (b == "addmm" || b == "baddbmm" || b == "_addmm_activation")
    ia = 1, ib = 2;
  else if (b != "mm" && b != "bmm" && b != "_scaled_mm" && b != "matmul")
    return std::nullopt;
  if (ev.inputs.size() <= ib) return std::nullopt;
  const OpInput &A = ev.inputs[ia], &B = ev.inputs[ib];
  if (A.shapes.size() != 1 || B.shapes.size() != 1) return std::nullopt;
  const auto &as = A.shapes[0], &bs = B.shapes[0];
  if (as.size() < 2 || bs.size() < 2 || as.size() != bs.size() || as.size() > 3) return std::nullopt;
  GemmCall g;
  g.m = as[as.size() - 2], g.k = as[as.size() - 1], g.n = bs[bs.size() - 1];
  if (bs[bs.size() - 2] != g.k) return std::nullopt;
  if (as.size() == 3) g.batch = as[0];
  g.layout = std::string(1, transposed(B) ? 'T' : 'N') + (transposed(A) ? 'T' : 'N');
  g.dtype = short_dtype(A.type);
  return g;
}

std::string kernel_type_of(const TraceEvent& ev, double* elements) {
  const std::string b = base_name(ev.name);
  *elements = max_numel(ev);
  if (is_gemm_op(b) || is_attention_op(b)) return "";
  // Inductor's kernels (named by the ops they fuse), without the trailing kernel index.
  if (starts_with(b, "triton_")) {
    std::string n = b;
    const auto us = n.find_last_of('_');
    if (us != std::string::npos && us + 1 < n.size() &&
        n.find_first_not_of("0123456789", us + 1) == std::string::npos)
      n.erase(us);
    return n;
  }
  auto dt0 = [&] { return dtype_of(ev, 0).empty() ? dtypes_key(ev) : dtype_of(ev, 0); };
  if (b == "copy_" || b == "_copy_from") {
    const std::string dst = dtype_of(ev, 0), src = dtype_of(ev, 1);
    *elements = numel(ev, 0);
    if (!dst.empty() && !src.empty() && dst != src) return "cast_" + src + "_" + dst;
    return "copy_" + (dst.empty() ? dtypes_key(ev) : dst);
  }
  if (b == "_to_copy" || b == "to" || b == "clone" || b == "contiguous") {
    const std::string src = dtype_of(ev, 0);
    std::string dst = ev.inputs.size() > 1 ? scalar_type_name(ev.inputs[1].concrete) : "";
    *elements = numel(ev, 0);
    if (!src.empty() && !dst.empty() && src != dst) return "cast_" + src + "_" + dst;
    return "copy_" + (src.empty() ? dtypes_key(ev) : src);
  }
  if (b == "native_layer_norm" || b == "layer_norm") return "layer_norm_" + dt0() + "_fwd";
  if (b == "native_layer_norm_backward" || b == "_fused_rms_norm_backward") {
    *elements = numel(ev, 0);
    const std::string d = dtype_of(ev, 1).empty() ? dt0() : dtype_of(ev, 1);
    return std::string(b == "native_layer_norm_backward" ? "layer_norm_" : "rms_norm_") + d + "_bwd";
  }
  if (b == "rms_norm" || b == "_fused_rms_norm") return "rms_norm_" + dt0() + "_fwd";
  if (b == "group_norm" || b == "native_group_norm") return "group_norm_" + dt0() + "_fwd";
  if (b == "_log_softmax" || b == "log_softmax") return "log_softmax_" + dt0() + "_fwd";
  if (b == "_log_softmax_backward_data") return "log_softmax_" + dt0() + "_bwd";
  if (b == "_softmax" || b == "softmax") return "softmax_" + dt0() + "_fwd";
  if (b == "_softmax_backward_data") return "softmax_" + dt0() + "_bwd";
  if (b == "cross_entropy_loss") return "cross_entropy_" + dt0() + "_fwd";
  if (b == "nll_loss_forward" || b == "nll_loss" || b == "nll_loss_nd") {
    *elements = numel(ev, 0);
    return "nll_loss_" + dt0() + "_fwd";
  }
  if (b == "nll_loss_backward") {
    *elements = numel(ev, 1);
    return "nll_loss_" + (dtype_of(ev, 1).empty() ? dt0() : dtype_of(ev, 1)) + "_bwd";
  }
  if (b == "embedding") {
    double rows = numel(ev, 1), width = 0;
    if (!ev.inputs.empty() && ev.inputs[0].shapes.size() == 1 && ev.inputs[0].shapes[0].size() == 2)
      width = double(ev.inputs[0].shapes[0][1]);
    *elements = rows * width;
    return "embedding_" + dt0() + "_fwd";
  }
  if (b == "embedding_dense_backward") return "embedding_" + dt0() + "_bwd";
  if (b == "cat") {
    const std::size_t parts = ev.inputs.empty() ? 0 : ev.inputs[0].shapes.size();
    *elements = numel(ev, 0);
    return "cat" + std::to_string(parts) + "_" + dtypes_key(ev);
  }
  if (b == "fill_" || b == "zero_") {
    *elements = numel(ev, 0);
    return "fill_" + dt0();
  }
  static const std::set<std::string> activations = {"gelu", "silu", "relu", "sigmoid", "tanh", "mish"};
  if (activations.count(b)) return b + "_" + dt0() + "_fwd";
  if (ends_with(b, "_backward")) {
    const std::string f = b.substr(0, b.size() - 9);
    if (activations.count(f) || f == "threshold")
      return (f == "threshold" ? "relu" : f) + "_" + dt0() + "_bwd";
  }
  // Generic: the op's name (in place marked), then its tensor dtypes.
  std::string n = b;
  while (!n.empty() && n.front() == '_') n.erase(0, 1);
  bool inplace = !n.empty() && n.back() == '_';
  if (inplace) n.pop_back();
  if (n.empty()) return "";
  return n + (inplace ? "_inplace_" : "_") + dtypes_key(ev);
}

std::vector<ClassifiedWork> classify(const TraceStep& s) {
  // Forward ops by sequence number (for tying backward kernels to their forward composite).
  std::unordered_map<std::int64_t, std::vector<int>> fwd_by_seq;
  std::vector<char> in_backward(s.ops.size(), 0);
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const int p = s.ops[i].parent;
    in_backward[i] = char(is_backward_node(s.ops[i].ev->name) || (p >= 0 && in_backward[std::size_t(p)]));
  }
  for (std::size_t i = 0; i < s.ops.size(); ++i)
    if (!in_backward[i] && s.ops[i].ev->sequence >= 0 && s.ops[i].ev->kind == EventKind::CpuOp)
      fwd_by_seq[s.ops[i].ev->sequence].push_back(int(i));
  auto outer_composite = [&](int i) {
    int best = -1;
    for (int a = i; a >= 0; a = s.ops[std::size_t(a)].parent)
      if (is_composite(base_name(s.ops[std::size_t(a)].ev->name))) best = a;
    return best;
  };

  std::vector<ClassifiedWork> out;
  out.reserve(s.work.size());
  for (const auto& w : s.work) {
    ClassifiedWork c;
    c.work = &w;
    const std::string& kname = w.gpu->name;
    c.triton = starts_with(kname, "triton_");
    // The op that defines the call: the innermost GEMM / attention op around the kernel if any,
    // else the innermost op with a kernel type.
    int gemm_op = -1, attn_op = -1, typed = -1;
    for (int a = w.op; a >= 0; a = s.ops[std::size_t(a)].parent) {
      const TraceEvent& ev = *s.ops[std::size_t(a)].ev;
      if (ev.kind != EventKind::CpuOp) continue;
      const std::string b = base_name(ev.name);
      if (gemm_op < 0 && is_gemm_op(b) && gemm_of(ev)) gemm_op = a;
      if (is_attention_backend_op(b) && attention_of(ev)) attn_op = a;  // the outermost backend op
      if (typed < 0 && (starts_with(ev.name, "aten::") || starts_with(ev.name, "triton_"))) {
        double e = 0;
        if (!kernel_type_of(ev, &e).empty()) typed = a;
      }
    }
    if (w.op >= 0) c.op = s.ops[std::size_t(w.op)].ev->name;
    // Phase.
    bool optimizer = false, backward = false, recompute_op = false;
    int node = -1;
    for (int a = w.op; a >= 0; a = s.ops[std::size_t(a)].parent) {
      const std::string& n = s.ops[std::size_t(a)].ev->name;
      if (starts_with(n, "Optimizer.step#") || starts_with(n, "Optimizer.zero_grad#") ||
          starts_with(n, "aten::_fused_adam") || starts_with(n, "aten::_foreach_") ||
          starts_with(n, "aten::_fused_sgd"))
        optimizer = true;
      if (is_backward_node(n)) {
        backward = true;
        if (node < 0 && contains(n, "Backward") && !starts_with(n, "autograd::engine")) node = a;
      } else if (!backward && starts_with(n, "aten::") && s.ops[std::size_t(a)].ev->sequence >= 0) {
        recompute_op = true;  // an op recorded for autograd below the backward node: a recompute
      }
    }
    optimizer = optimizer || contains(kname, "multi_tensor_apply") || contains(kname, "FusedAdam");
    c.phase = optimizer  ? Phase::Optimizer
              : backward ? (recompute_op ? Phase::Recompute : Phase::Backward)
                         : Phase::Forward;

    if (typed >= 0) {
      c.unit_op = typed;
      c.type = kernel_type_of(*s.ops[std::size_t(typed)].ev, &c.elements);
      // Tensor lists carry no dtype in the trace; the copy kernel's element type names its width.
      if (ends_with(c.type, "_na")) {
        const auto at = kname.find("OpaqueType<");
        const char width = at == std::string::npos ? '\0' : kname[at + 11];
        if (width == '2' || width == '4')
          c.type = c.type.substr(0, c.type.size() - 2) + (width == '2' ? "bf16" : "f32");
      }
    }
    if (gemm_op >= 0) {
      c.unit_op = gemm_op, c.type.clear(), c.elements = 0;
      c.gemm = gemm_of(*s.ops[std::size_t(gemm_op)].ev);
    }
    if (attn_op >= 0) {
      c.unit_op = attn_op, c.type.clear(), c.elements = 0, c.gemm.reset();
      c.attention = attention_of(*s.ops[std::size_t(attn_op)].ev);
    }
    // Composite: the outermost composite op around the call, or for backward kernels the
    // composite whose forward op created their autograd node.
    if (!c.gemm && !c.attention && c.unit_op >= 0) {
      int comp = outer_composite(c.unit_op);
      std::string suffix_from, suffix_to;
      if (comp < 0 && c.phase == Phase::Backward && node >= 0) {
        auto it = fwd_by_seq.find(s.ops[std::size_t(node)].ev->sequence);
        if (it != fwd_by_seq.end())
          for (int f : it->second)
            if ((comp = outer_composite(f)) >= 0) break;
        suffix_from = "_fwd", suffix_to = "_bwd";
      }
      if (comp >= 0) {
        std::string t = kernel_type_of(*s.ops[std::size_t(comp)].ev, &c.composite_elements);
        if (!suffix_from.empty() && ends_with(t, suffix_from))
          t = t.substr(0, t.size() - suffix_from.size()) + suffix_to;
        if (t != c.type) c.composite_type = t, c.composite_op = comp;
      }
    }

    // Category.
    const std::string kl = lower(kname);
    if (w.gpu->kind == EventKind::Memcpy || w.gpu->kind == EventKind::Memset)
      c.category = KernelCategory::Copy;
    else if (is_nccl(kname))
      c.category = KernelCategory::Communication;
    else if (c.phase == Phase::Optimizer)
      c.category = KernelCategory::Optimizer;
    else if (c.attention)
      c.category = KernelCategory::Attention;
    else if (c.gemm)
      c.category = KernelCategory::Gemm;
    else if (c.triton) {
      if (starts_with(kl, "triton_tem_") || contains(kl, "_mm_") || ends_with(kl, "_mm"))
        c.category = KernelCategory::Gemm;
      else if (contains(kl, "rsqrt") || contains(kl, "norm"))
        c.category = KernelCategory::Norm;
      else if (contains(kl, "adam"))
        c.category = KernelCategory::Optimizer;
      else
        c.category = KernelCategory::Elementwise;
    } else if (starts_with(c.type, "cast_") || starts_with(c.type, "copy_"))
      c.category = KernelCategory::Copy;
    else if (contains(c.type, "_norm_") || contains(c.composite_type, "_norm_") ||
             contains(kl, "layer_norm") || contains(kl, "rms_norm") || contains(kl, "rmsnorm") ||
             contains(kl, "layernorm"))
      c.category = KernelCategory::Norm;
    else if (!c.type.empty())
      c.category = KernelCategory::Elementwise;
    else if (contains(kl, "gemm") || contains(kl, "xmma") || contains(kl, "nvjet") ||
             contains(kl, "cutlass") || contains(kl, "splitkreduce"))
      c.category = KernelCategory::Gemm;
    else if (contains(kl, "flash") || contains(kl, "fmha") || contains(kl, "sdpa"))
      c.category = KernelCategory::Attention;
    else if (contains(kl, "copy"))
      c.category = KernelCategory::Copy;
    else if (contains(kl, "elementwise") || contains(kl, "reduce"))
      c.category = KernelCategory::Elementwise;
    else
      c.category = KernelCategory::Other;
    out.push_back(std::move(c));
  }
  // Composites of several ATen ops (transformers' RMSNorm, rotary embeddings, SwiGLU): their
  // kernels carry the composite's type, and a norm's kernels count as norm work.
  std::vector<std::string> labels;
  composite_calls(s, out, &labels);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (labels[i].empty() || !out[i].composite_type.empty()) continue;
    out[i].composite_type = labels[i];
    if (starts_with(labels[i], "rms_norm") && out[i].category == KernelCategory::Elementwise)
      out[i].category = KernelCategory::Norm;
  }
  return out;
}

}  // namespace infraplan::ptrace
