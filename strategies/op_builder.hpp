#pragma once
// Building blocks of the per-layer op lists (training_ops.cpp for Megatron-style kernels,
// eager_ops.cpp for PyTorch eager, compiled_ops.cpp for torch.compile): an op-list builder that
// prices each op through the cost model, the per-rank shapes of one layer, and the pieces every
// framework shares (attention core with CP, TP collectives, weight-gradient GEMMs).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "hardware/framework_costs.hpp"
#include "strategies/training_ops.hpp"

namespace infraplan::strat {

/// Appends ops to a template; tracks the main compute chain.
class Builder {
 public:
  explicit Builder(const OpContext& c) : c_(c) {}
  std::vector<OpTemplate> ops;

  int gemm(const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
           OpCategory cat = OpCategory::Compute, std::int64_t batch = 1, double mult = 1,
           hw::GemmLayout layout = hw::GemmLayout::TN) {
    hw::GemmShape s{std::max<std::int64_t>(m, 1), std::max<std::int64_t>(n, 1), std::max<std::int64_t>(k, 1),
                    c_.gemm_dtype, std::max<std::int64_t>(batch, 1), layout};
    OpTemplate o;
    // The GEMM tables are graph replays; a training step issues its GEMMs eagerly, each paying the
    // GPU's idle between dependent eagerly issued kernels beyond a replay (ceilings.eager_kernel_gap_us),
    // and the memsets cuBLAS puts ahead of some of its kernels (framework.memsets).
    o.name = name, o.category = cat, o.flops = mult * s.flops();
    o.seconds = mult * (c_.cost->gemm(s).seconds + c_.cost->eager_kernel_gap_seconds() + c_.memset_gemm_s);
    return push(o);
  }
  /// An input-gradient GEMM dX[T, in] = dY[T, out]·W[out, in] (m = T, n = in, k = out), in the NN
  /// layout frameworks run it in (docs/calibration.md, "GEMM layouts").
  int dgrad(const char* name, std::int64_t m, std::int64_t n, std::int64_t k) {
    return gemm(name, m, n, k, OpCategory::Compute, 1, 1, hw::GemmLayout::NN);
  }
  int mem(const char* name, double bytes, OpCategory cat = OpCategory::Compute) {
    OpTemplate o;
    o.name = name, o.category = cat, o.bytes = bytes, o.seconds = c_.cost->memory_bound(bytes).seconds;
    return push(o);
  }
  int compute(const char* name, double seconds, double flops, OpCategory cat, std::vector<int> deps = {}) {
    OpTemplate o;
    o.name = name, o.category = cat, o.seconds = seconds, o.flops = flops;
    if (!deps.empty()) o.deps = std::move(deps), o.explicit_deps = true;
    return push(o);
  }
  int comm(const char* name, OpCategory cat, Stream st, CommOp op, double bytes, GroupKind g,
           std::vector<int> deps = {}) {
    OpTemplate o;
    o.name = name, o.category = cat, o.stream = st, o.comm = op, o.bytes = bytes, o.group = g;
    if (!deps.empty()) o.deps = std::move(deps), o.explicit_deps = true;
    return push(o);
  }
  /// A kernel of the eager framework (framework.elementwise table `table_op` over `elements`, at
  /// the cost model's clock by the op's framework.clock_share); without such a table,
  /// memory-bound over `bytes`. Launched inside another op's dispatch
  /// unless `module` names its own.
  int eager(const char* name, const char* table_op, double elements, double bytes,
            OpCategory cat = OpCategory::Compute, const char* module = "") {
    std::optional<double> t;
    if (c_.profile) t = hw::eager_op_seconds(*c_.profile, table_op, elements);
    OpTemplate o;
    o.name = name, o.category = cat, o.bytes = bytes, o.module = module;
    // A table entry was timed at the top clock; at a lower one it slows by its measured clock share.
    o.seconds = t ? *t * c_.cost->memory_clock_factor(hw::eager_op_clock_share(*c_.profile, table_op))
                  : c_.cost->memory_bound(bytes).seconds;
    return push(o);
  }
  /// Tags the last op with the framework module whose host cost it carries ("" = none).
  void module(const char* kind) { ops.back().module = kind; }
  /// The last op's host dispatch: `n` elementwise aten ops of an eager framework.
  void aten(int n) { ops.back().aten_ops = n; }
  int last() const { return int(ops.size()) - 1; }
  /// Makes the last op depend on `deps` instead of the op before it.
  void depend_last_on(std::vector<int> deps) {
    ops.back().deps = std::move(deps);
    ops.back().explicit_deps = true;
  }

 private:
  int push(OpTemplate o) {
    ops.push_back(std::move(o));
    return last();
  }
  const OpContext& c_;
};

/// Per-rank shapes of one layer: tokens T, hidden h, tp, query / KV heads on this rank, head
/// width, fused-QKV width, attention-output width, FFN columns on this rank, and 2 for SwiGLU's
/// gate + up (1 for GELU).
struct Shapes {
  std::int64_t T, h, tp, heads_r, kv_heads_r, head_dim, qkv_n, o_k, ffn_r, up_mult;
};

Shapes shapes(const OpContext& c);

/// Causal attention forward seconds of one micro-batch on this rank (CP-split), FLOPs in *flops.
double attention_fwd_seconds(const OpContext& c, const Shapes& s, double* flops);

/// Attention core with context parallelism: ring (KV chunks passed around while the local chunk
/// is processed) or all-to-all (Ulysses: heads scattered, sequence gathered).
void attention_core(Builder& b, const OpContext& c, const Shapes& s, bool backward, OpCategory cat);

/// TP communication after a column/row-parallel pair: all-reduce without SP; with SP an
/// all-gather before the column-parallel GEMM (`gather`) or a reduce-scatter after the row one.
void tp_collective(Builder& b, const OpContext& c, bool gather, const char* name_ar, const char* name_ag,
                   const char* name_rs);

/// The last op computed an input gradient: its TP reduction (reduce-scatter with SP) runs on the
/// TP stream while the weight-gradient GEMM computes (Megatron's async TP gradient comm).
/// Returns {the input-gradient op, the op the compute stream waits for before the norm}.
std::pair<int, int> tp_input_grad(Builder& b, const OpContext& c);

/// Weight gradient of a [n × hidden] weight over this micro-batch's tokens, after `dgrad`: an NT
/// GEMM (k = tokens) of m = hidden, n = n.
void wgrad_gemm(Builder& b, const OpContext& c, const char* name, std::int64_t n, int dgrad,
                const char* module = nullptr);
/// The same for a weight [out, in] as autograd computes it: dW[out, in] = dY[T, out]ᵀ·X[T, in], the
/// NT layout with m = out, n = in, k = tokens.
void wgrad_gemm(Builder& b, const OpContext& c, const char* name, std::int64_t out, std::int64_t in, int dgrad,
                const char* module);

/// The LM head's backward as the input-gradient and weight-gradient GEMMs a framework runs.
void lm_head_backward_gemms(Builder& b, const OpContext& c, std::int64_t v, const char* module);

/// A memory-bound norm (Megatron-style fused kernel) over this rank's rows, `mult` passes.
void norm(Builder& b, const OpContext& c, const char* name, double mult, OpCategory cat);

bool is_moe_layer(const model::ModelSpec& m, std::int64_t layer);

}  // namespace infraplan::strat
