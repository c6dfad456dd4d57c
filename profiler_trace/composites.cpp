#include "profiler_trace/composites.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace infraplan::ptrace {

namespace {

std::string base_of(const TraceEvent& e) {
  return e.name.rfind("aten::", 0) == 0 ? e.name.substr(6) : e.name;
}

bool is_aten(const TraceEvent& e) { return e.name.rfind("aten::", 0) == 0; }

const OpInput* tensor_input(const TraceEvent& e, std::size_t rank) {
  for (const auto& in : e.inputs)
    if (in.shapes.size() == 1 && in.shapes[0].size() == rank) return &in;
  return nullptr;
}

std::string dtype_of(const OpInput* in) { return in ? short_dtype(in->type) : ""; }

bool has_zero_stride(const OpInput& in) {
  if (in.strides.size() != 1) return false;
  for (auto s : in.strides[0])
    if (s == 0) return true;
  return false;
}

bool contiguous(const OpInput& in) {
  if (in.shapes.size() != 1 || in.strides.size() != 1 || in.shapes[0].size() != in.strides[0].size())
    return true;
  std::int64_t want = 1;
  for (std::size_t i = in.shapes[0].size(); i-- > 0;) {
    if (in.shapes[0][i] != 1 && in.strides[0][i] != want) return false;
    want *= in.shapes[0][i];
  }
  return true;
}

/// A recognised forward instance: its outermost ops and the types it fills.
struct Instance {
  std::string fwd_type, bwd_type;
  double elements = 0;
  std::vector<int> ops;
};

}  // namespace

std::vector<CompositeCall> composite_calls(const TraceStep& s, const std::vector<ClassifiedWork>& work,
                                           std::vector<std::string>* labels) {
  if (labels) labels->assign(work.size(), "");
  const std::size_t n = s.ops.size();
  // Kernel seconds launched under each op (inclusive) and each op's outermost ATen ancestor.
  std::vector<double> incl(n, 0);
  for (const auto& w : work)
    for (int a = w.work->op; a >= 0; a = s.ops[std::size_t(a)].parent) incl[std::size_t(a)] += w.seconds();
  std::vector<int> outer(n, -1);
  std::vector<char> in_optimizer(n, 0), in_backward_fn(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const TraceEvent& e = *s.ops[i].ev;
    const int p = s.ops[i].parent;
    if (p >= 0) {
      in_optimizer[i] = in_optimizer[std::size_t(p)];
      in_backward_fn[i] = in_backward_fn[std::size_t(p)];
    }
    if (e.name.rfind("Optimizer.", 0) == 0) in_optimizer[i] = 1;
    if (e.name.find("Backward") != std::string::npos && e.name.rfind("autograd::engine", 0) != 0)
      in_backward_fn[i] = 1;
    if (is_aten(e)) outer[i] = p >= 0 && outer[std::size_t(p)] >= 0 ? outer[std::size_t(p)] : int(i);
  }
  // Per host thread, the outermost ATen ops of forward computation (first forward and the
  // recompute of checkpointed blocks, which records sequence numbers), in order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> threads;
  for (std::size_t i = 0; i < n; ++i) {
    if (outer[i] != int(i) || in_optimizer[i]) continue;
    const TraceEvent& e = *s.ops[i].ev;
    if (in_backward_fn[i] && e.sequence < 0) continue;  // backward computation, not a recompute
    threads[{e.pid, e.tid}].push_back(int(i));
  }

  std::vector<Instance> found;
  for (const auto& thread : threads) {
    const auto& seq = thread.second;  // a named reference: lambdas below capture it
    std::vector<int> k;  // positions in seq of ops that launched kernels
    for (std::size_t i = 0; i < seq.size(); ++i)
      if (incl[std::size_t(seq[i])] > 0) k.push_back(int(i));
    auto name = [&](std::size_t ki) { return base_of(*s.ops[std::size_t(seq[std::size_t(k[ki])])].ev); };
    auto ev = [&](std::size_t ki) -> const TraceEvent& {
      return *s.ops[std::size_t(seq[std::size_t(k[ki])])].ev;
    };
    auto span = [&](std::size_t k0, std::size_t k1) {  // every outermost op from kernel op k0 to k1
      std::vector<int> ops;
      for (int i = k[k0]; i <= k[k1]; ++i) ops.push_back(seq[std::size_t(i)]);
      return ops;
    };
    auto is_to = [](const std::string& b) { return b == "to" || b == "_to_copy"; };
    std::vector<char> used(k.size(), 0);
    for (std::size_t i = 0; i < k.size(); ++i) {
      if (used[i]) continue;
      // rope: mul, neg, cat, mul, add over a 4-D q.
      if (i + 4 < k.size() && name(i) == "mul" && name(i + 1) == "neg" && name(i + 2) == "cat" &&
          name(i + 3) == "mul" && name(i + 4) == "add") {
        const OpInput* q = tensor_input(ev(i), 4);
        if (q) {
          bool mixed = false;
          for (const auto& in : ev(i).inputs)
            mixed = mixed || (short_dtype(in.type) == "f32" && dtype_of(q) == "bf16");
          const std::string t = mixed ? "rope_amp" : "rope_" + dtype_of(q);
          found.push_back({t + "_fwd", t + "_bwd", q->elements(), span(i, i + 4)});
          std::fill(used.begin() + std::ptrdiff_t(i), used.begin() + std::ptrdiff_t(i + 5), 1);
          continue;
        }
      }
      // transformers' RMSNorm: (to,) pow, mean, add, rsqrt, mul, (to,) mul.
      {
        std::size_t j = i;
        if (j < k.size() && is_to(name(j))) ++j;
        if (j + 4 < k.size() && name(j) == "pow" && name(j + 1) == "mean" && name(j + 2) == "add" &&
            name(j + 3) == "rsqrt" && name(j + 4) == "mul") {
          std::size_t e = j + 5;
          if (e < k.size() && is_to(name(e))) ++e;
          if (e < k.size() && name(e) == "mul") {
            const TraceEvent& first = ev(i);
            const std::string dt = first.inputs.empty() ? "" : short_dtype(first.inputs[0].type);
            const double el = ev(j).inputs.empty() ? 0 : ev(j).inputs[0].elements();
            found.push_back({"rms_norm_hf_" + dt + "_fwd", "rms_norm_hf_" + dt + "_bwd", el, span(i, e)});
            std::fill(used.begin() + std::ptrdiff_t(i), used.begin() + std::ptrdiff_t(e + 1), 1);
            continue;
          }
        }
      }
      // swiglu: silu(gate), then (after the up projection) the mul of two tensors of its shape.
      if (name(i) == "silu" && !ev(i).inputs.empty() && ev(i).inputs[0].shapes.size() == 1) {
        const auto& shape = ev(i).inputs[0].shapes[0];
        for (std::size_t j = i + 1; j < k.size() && j < i + 8 && name(j) != "silu"; ++j) {
          const TraceEvent& m = ev(j);
          if (name(j) != "mul" || m.inputs.size() < 2 || m.inputs[0].shapes.size() != 1 ||
              m.inputs[1].shapes.size() != 1 || m.inputs[0].shapes[0] != shape ||
              m.inputs[1].shapes[0] != shape)
            continue;
          const std::string dt = short_dtype(ev(i).inputs[0].type);
          found.push_back({"swiglu_" + dt + "_fwd",
                           "swiglu_" + dt + "_bwd",
                           ev(i).inputs[0].elements(),
                           {seq[std::size_t(k[i])], seq[std::size_t(k[j])]}});
          used[i] = used[j] = 1;
          break;
        }
        if (used[i]) continue;
      }
      // GQA expansion: the copy of an expanded 5-D view (with the expand / unsqueeze before it).
      const std::string b = name(i);
      if (b == "reshape" || b == "clone" || b == "contiguous" || b == "_reshape_alias") {
        const OpInput* in5 = tensor_input(ev(i), 5);
        const OpInput* in4 = tensor_input(ev(i), 4);
        if (in5 && has_zero_stride(*in5)) {
          std::vector<int> ops{seq[std::size_t(k[i])]};
          for (int p = k[i] - 1; p >= 0 && p >= k[i] - 3; --p) {
            const std::string pb = base_of(*s.ops[std::size_t(seq[std::size_t(p)])].ev);
            if (incl[std::size_t(seq[std::size_t(p)])] > 0 ||
                (pb != "expand" && pb != "unsqueeze" && pb != "slice" && pb != "select" && pb != "index"))
              break;
            ops.push_back(seq[std::size_t(p)]);
          }
          const std::string t = "gqa_expand_" + dtype_of(in5);
          found.push_back({t, t + "_bwd", in5->elements(), ops});
          used[i] = 1;
          continue;
        }
        if (in4 && !has_zero_stride(*in4) && !contiguous(*in4)) {
          const std::string t = "transpose_copy_" + dtype_of(in4);
          found.push_back({t, t + "_bwd", in4->elements(), {seq[std::size_t(k[i])]}});
          used[i] = 1;
        }
      }
    }
  }

  // Forward calls; backward calls through the autograd nodes' sequence numbers.
  std::vector<CompositeCall> out;
  std::unordered_map<std::int64_t, std::size_t> instance_by_seq;
  std::vector<char> member(n, 0);
  std::vector<int> instance_of(n, -1);
  for (std::size_t f = 0; f < found.size(); ++f) {
    double secs = 0;
    for (int o : found[f].ops) secs += incl[std::size_t(o)], instance_of[std::size_t(o)] = int(f);
    out.push_back({found[f].fwd_type, found[f].elements, secs});
  }
  for (std::size_t i = 0; i < n; ++i) {
    const TraceEvent& e = *s.ops[i].ev;
    if (e.sequence < 0 || outer[i] < 0 || instance_of[std::size_t(outer[i])] < 0) continue;
    instance_by_seq.emplace(e.sequence, std::size_t(instance_of[std::size_t(outer[i])]));
  }
  std::vector<double> bwd(found.size(), 0);
  for (std::size_t wi = 0; wi < work.size(); ++wi) {
    const auto& w = work[wi];
    if (w.phase != Phase::Backward) {
      // Forward work inside an instance's ops.
      if (labels)
        for (int a = w.work->op; a >= 0; a = s.ops[std::size_t(a)].parent)
          if (outer[std::size_t(a)] == a && instance_of[std::size_t(a)] >= 0) {
            (*labels)[wi] = found[std::size_t(instance_of[std::size_t(a)])].fwd_type;
            break;
          }
      continue;
    }
    for (int a = w.work->op; a >= 0; a = s.ops[std::size_t(a)].parent) {
      const TraceEvent& e = *s.ops[std::size_t(a)].ev;
      if (e.name.find("Backward") == std::string::npos || e.name.rfind("autograd::engine", 0) == 0) continue;
      if (e.sequence >= 0)
        if (auto it = instance_by_seq.find(e.sequence); it != instance_by_seq.end()) {
          bwd[it->second] += w.seconds();
          if (labels) (*labels)[wi] = found[it->second].bwd_type;
        }
      break;
    }
  }
  for (std::size_t f = 0; f < found.size(); ++f)
    if (bwd[f] > 0) out.push_back({found[f].bwd_type, found[f].elements, bwd[f]});
  return out;
}

}  // namespace infraplan::ptrace
