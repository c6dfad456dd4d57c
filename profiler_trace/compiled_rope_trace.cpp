#include "profiler_trace/compiled_rope_trace.hpp"

#include <map>
#include <set>
#include <string>
#include <tuple>

namespace infraplan::ptrace {

bool is_compiled_rope_kernel(const ClassifiedWork& w) {
  if (!w.triton || !w.work || !w.work->gpu) return false;
  const std::string& n = w.work->gpu->name;
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  return has("arange") && has("reciprocal") && (has("cos") || has("sin"));
}

std::optional<TracedCompiledRope> traced_compiled_rope(const std::vector<ClassifiedWork>& work) {
  TracedCompiledRope r;
  double fwd = 0, bwd = 0;
  // The forward attention shape most called (the model's layers).
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>, int> shapes;
  std::set<int> calls;  // op instances: a call's kernels count once
  for (const auto& w : work) {
    // Recompute (checkpointing) repeats the forward's kernels; the model prices it as another forward.
    if (is_compiled_rope_kernel(w)) {
      if (w.phase == Phase::Forward) fwd += w.seconds();
      if (w.phase == Phase::Backward) bwd += w.seconds();
    }
    if (w.attention && !w.attention->backward && w.phase == Phase::Forward &&
        calls.insert(w.unit_op).second) {
      const auto& a = *w.attention;
      ++shapes[{a.batch, a.q_len, a.heads, a.kv_heads, a.head_dim}];
    }
  }
  if (fwd + bwd <= 0 || shapes.empty()) return std::nullopt;
  auto most = shapes.begin();
  for (auto it = shapes.begin(); it != shapes.end(); ++it)
    if (it->second > most->second) most = it;
  const auto [batch, q_len, heads, k_heads, head_dim] = most->first;
  r.layers = int(calls.size());
  r.forward_seconds = fwd / r.layers, r.backward_seconds = bwd / r.layers;
  const double tokens = double(batch) * double(q_len);
  r.forward_elements = tokens * double(head_dim) * double(heads + k_heads);
  // KV heads: the narrowest forward projection of the residual stream (k = query heads × width).
  std::int64_t kv_width = 0;
  for (const auto& w : work)
    if (w.gemm && w.phase == Phase::Forward && w.gemm->layout == "TN" && w.gemm->k == heads * head_dim &&
        w.gemm->n % head_dim == 0 && w.gemm->n <= heads * head_dim && (kv_width == 0 || w.gemm->n < kv_width))
      kv_width = w.gemm->n;
  if (kv_width > 0) r.rotated_elements = tokens * double(heads * head_dim + kv_width);
  return r;
}

}  // namespace infraplan::ptrace
