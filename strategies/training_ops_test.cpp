// The op lists of one layer under PyTorch autocast (amp-bf16) against the other recipes, priced
// with the embedded H200 profile (framework eager-kernel table and per-module host costs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/json_text.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/cluster.hpp"
#include "hardware/framework_costs.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "hardware/spread_cost_model.hpp"
#include "strategies/training_ops.hpp"
#include "strategies/work_graph.hpp"

namespace infraplan::strat {
namespace {

struct Job {
  model::ModelSpec m = model::preset("gpt2-1.5b");
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  TrainingConfig t;
  explicit Job(Precision p) {
    c.gpus_per_node = 1;
    t.seq_len = 1024;
    t.micro_batch = 8;
    t.global_batch = 8;
    t.precision = p;
    resolve_training(t, m, c);
  }
};

const hw::CalibratedCostModel& h200() {
  static auto m = hw::make_calibrated_cost_model("h200-sxm-141gb");
  return *m;
}

bool has(const std::vector<OpTemplate>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const OpTemplate& o) { return name == o.name; });
}

double total(const std::vector<OpTemplate>& ops) {
  double s = 0;
  for (const auto& o : ops) s += o.seconds;
  return s;
}

TEST(TrainingOps, AutocastLayerHasTheEagerKernels) {
  Job amp(Precision::AmpBF16), mixed(Precision::BF16Mixed);
  OpContext ca(amp.m, amp.t, h200()), cm(mixed.m, mixed.t, h200());
  ASSERT_TRUE(ca.autocast);
  ASSERT_FALSE(cm.autocast);
  auto fa = layer_forward_ops(ca, 0), ba = layer_backward_ops(ca, 0);
  for (const char* n : {"input_cast", "weight_cast", "residual_add"})
    EXPECT_TRUE(has(fa, n)) << n;
  for (const char* n : {"grad_cast", "dgrad_cast", "qkv_grad_cat", "bias_grad", "weight_grad_cast"})
    EXPECT_TRUE(has(ba, n)) << n;
  auto fm = layer_forward_ops(cm, 0);
  EXPECT_FALSE(has(fm, "input_cast"));
  // fp32 norms and residuals, casts and bias gradients: autocast moves more bytes per layer.
  EXPECT_GT(total(fa), total(fm) * 1.03);
  // The eager kernels are priced from the framework table where the profile has one, at the
  // tables' reference clock by their clock share (framework.clock_share).
  const auto* p = hw::profile_of(h200());
  ASSERT_NE(p, nullptr);
  const double rh = double(amp.t.micro_batch * amp.t.seq_len * amp.m.hidden);
  auto it =
      std::find_if(fa.begin(), fa.end(), [](const OpTemplate& o) { return std::string(o.name) == "norm1"; });
  ASSERT_NE(it, fa.end());
  EXPECT_DOUBLE_EQ(it->seconds,
                   *hw::eager_op_seconds(*p, "layer_norm_f32_fwd", rh) *
                       h200().memory_clock_factor(hw::eager_op_clock_share(*p, "layer_norm_f32_fwd")));
  EXPECT_GT(it->seconds,
            *hw::eager_op_seconds(*p, "layer_norm_f32_fwd", rh));  // φ 0.58, timed at the top clock
}

/// A LLaMA-architecture job on one H200 (GQA 4:1, SwiGLU, RoPE, RMSNorm) in `fw`.
struct LlamaJob {
  model::ModelSpec m = model::preset("llama3-8b");
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  TrainingConfig t;
  LlamaJob(Precision p, Framework fw) {
    c.gpus_per_node = 1;
    t.seq_len = 2048;
    t.micro_batch = 1;
    t.global_batch = 1;
    t.precision = p;
    t.framework = fw;
    resolve_training(t, m, c);
  }
};

int count(const std::vector<OpTemplate>& ops, const std::string& name) {
  return int(std::count_if(ops.begin(), ops.end(), [&](const OpTemplate& o) { return name == o.name; }));
}

TEST(TrainingOps, EagerLlamaLayerRunsRopeGqaAndSeparateProjections) {
  LlamaJob eager(Precision::AmpBF16, Framework::PytorchEager), hf(Precision::AmpBF16, Framework::Transformers);
  OpContext ce(eager.m, eager.t, h200()), ch(hf.m, hf.t, h200());
  auto fe = layer_forward_ops(ce, 0), fh = layer_forward_ops(ch, 0), be = layer_backward_ops(ce, 0);
  for (const char* n : {"q_proj", "k_proj", "v_proj", "mlp_gate", "mlp_up", "rope_q", "rope_k", "swiglu",
                        "gqa_expand_k", "gqa_expand_v", "sdpa_cast_q", "sdpa_cast_k"})
    EXPECT_TRUE(has(fe, n)) << n;
  EXPECT_FALSE(has(fe, "qkv"));
  // Under autocast every projection casts its fp32 input: Q, K, V, gate, up.
  EXPECT_EQ(count(fe, "input_cast"), 5);
  // transformers passes K/V heads to SDPA (enable_gqa): no repeat.
  EXPECT_FALSE(has(fh, "gqa_expand_k"));
  for (const char* n : {"rope_q_bwd", "rope_k_bwd", "gqa_expand_k_bwd", "swiglu_bwd", "q_grad_transpose"})
    EXPECT_TRUE(has(be, n)) << n;
  // transformers' RMSNorm (a chain of fp32 kernels) costs more than F.rms_norm's fused kernel.
  auto norm_s = [](const std::vector<OpTemplate>& ops) {
    return std::find_if(ops.begin(), ops.end(), [](const OpTemplate& o) { return std::string(o.name) == "norm1"; })
        ->seconds;
  };
  EXPECT_GT(norm_s(fh), 2 * norm_s(fe));
  // Pure bf16: no casts at all.
  LlamaJob pure(Precision::BF16Pure, Framework::PytorchEager);
  OpContext cp(pure.m, pure.t, h200());
  auto fp = layer_forward_ops(cp, 0);
  EXPECT_FALSE(has(fp, "input_cast"));
  EXPECT_FALSE(has(fp, "weight_cast"));
  EXPECT_LT(total(fp), total(fe));
}

// Op-level selective checkpointing (torchtitan's policy): backward recomputes the block's forward
// but its 1st, 3rd, ... matmuls and attention, whose outputs were saved; it costs more than no
// recomputation and less than full recomputation.
TEST(TrainingOps, SelectiveOpRecomputesEveryOtherMatmulAndNoAttention) {
  auto recomputed = [](const std::vector<OpTemplate>& ops, const std::string& name) {
    return std::any_of(ops.begin(), ops.end(), [&](const OpTemplate& o) {
      return name == o.name && o.category == OpCategory::Recompute;
    });
  };
  LlamaJob none(Precision::AmpBF16, Framework::Transformers), sac = none, full = none;
  sac.t.recompute = model::Recompute::SelectiveOp;
  full.t.recompute = model::Recompute::Full;
  OpContext cn(none.m, none.t, h200()), cs(sac.m, sac.t, h200()), cf(full.m, full.t, h200());
  const auto bs = layer_backward_ops(cs, 0), bf = layer_backward_ops(cf, 0);
  // q(1) k(2) v(3) o(4) gate(5) up(6) down(7): the even ones run again.
  for (const char* n : {"k_proj", "attn_proj", "mlp_up", "norm1", "rope_q", "swiglu", "input_cast"})
    EXPECT_TRUE(recomputed(bs, n)) << n;
  for (const char* n : {"q_proj", "v_proj", "mlp_gate", "mlp_down"}) {
    EXPECT_FALSE(recomputed(bs, n)) << n;
    EXPECT_TRUE(recomputed(bf, n)) << n;
  }
  const auto attention_recomputed = [](const std::vector<OpTemplate>& ops) {
    return std::any_of(ops.begin(), ops.end(), [](const OpTemplate& o) {
      return o.category == OpCategory::Recompute && std::string(o.name).rfind("attention", 0) == 0;
    });
  };
  EXPECT_FALSE(attention_recomputed(bs));
  EXPECT_TRUE(attention_recomputed(bf));
  const double tn = total(layer_backward_ops(cn, 0)), ts = total(bs), tf = total(bf);
  EXPECT_GT(ts, tn);
  EXPECT_LT(ts, tf);
}

TEST(TrainingOps, FrameworkDefaultsByPrecisionAndParses) {
  TrainingConfig t;
  t.precision = Precision::AmpBF16;
  EXPECT_EQ(framework_of(t), Framework::PytorchEager);
  t.precision = Precision::BF16Mixed;
  EXPECT_EQ(framework_of(t), Framework::Megatron);
  t.framework = Framework::TorchCompile;
  EXPECT_EQ(framework_of(t), Framework::TorchCompile);
  Json j = {{"framework", "transformers"}};
  EXPECT_EQ(training_from_json(j).framework, Framework::Transformers);
  try {
    training_from_json(Json{{"framework", "jax"}});
    FAIL() << "accepted an unknown framework";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("training.framework"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("torch-compile"), std::string::npos) << e.what();
  }
}

TEST(TrainingOps, CompiledLayerFusesTheElementwiseChains) {
  LlamaJob eager(Precision::AmpBF16, Framework::PytorchEager), comp(Precision::AmpBF16, Framework::TorchCompile);
  OpContext ce(eager.m, eager.t, h200()), cc(comp.m, comp.t, h200());
  auto fe = layer_forward_ops(ce, 0), fc = layer_forward_ops(cc, 0);
  EXPECT_TRUE(has(fc, "rope_repeat"));
  EXPECT_TRUE(has(fc, "silu_mul"));
  EXPECT_FALSE(has(fc, "input_cast"));
  EXPECT_LT(fc.size(), fe.size());
  EXPECT_LT(total(fc), total(fe));
  // Inductor's generated code has no per-op eager dispatch; its host time is the measured compiled
  // block (and the eager optimizer step).
  const auto* p = hw::profile_of(h200());
  ASSERT_TRUE(p->framework->block_us.count("torch-compile/amp-bf16/plain"));
  const auto want = p->framework->block_us.at("torch-compile/amp-bf16/plain");
  EXPECT_TRUE(cc.host.enabled);
  EXPECT_NEAR(host_seconds(cc, fc, true, true), want.first * 1e-6, 1e-12);
  EXPECT_NEAR(host_seconds(cc, layer_backward_ops(cc, 0), false, true), want.second * 1e-6, 1e-12);
  EXPECT_EQ(host_seconds(cc, fc, true, false), 0.0);  // outside a layer: nothing per op
  // ... but each call of the compiled forward and backward costs its measured fixed host time.
  ASSERT_TRUE(cc.host.pass);
  EXPECT_NEAR(cc.host.pass->first, p->framework->pass_us.at("torch-compile/amp-bf16/plain").first * 1e-6,
              1e-12);
  EXPECT_GT(cc.host.pass->second, 0.0);
  // The checkpointed compiled block is measured too (its backward includes the recompute).
  comp.t.recompute = model::Recompute::Full;
  OpContext ck(comp.m, comp.t, h200());
  ASSERT_TRUE(ck.host.enabled);
  EXPECT_NEAR(host_seconds(ck, layer_backward_ops(ck, 0), false, true),
              p->framework->block_us.at("torch-compile/amp-bf16/checkpointed").second * 1e-6, 1e-12);
  // Without a measured compiled block, no host floor at all; asked for, it is refused naming the key.
  Json j = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/hardware/profiles/h200-sxm-141gb.json");
  j["framework"]["block_host_us"].erase("torch-compile/amp-bf16/checkpointed");
  const hw::CalibratedCostModel without(hw::parse_profile(j, "without_block.json"), h200().gpu());
  OpContext unmeasured(comp.m, comp.t, without);
  EXPECT_FALSE(unmeasured.host.enabled);
  comp.t.host_dispatch = HostDispatch::On;
  try {
    OpContext refused(comp.m, comp.t, without);
    FAIL() << "accepted host_dispatch on without a measured compiled block";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("torch-compile/amp-bf16/checkpointed"), std::string::npos)
        << e.what();
  }
}

// Inductor recomputes the rotary angles for every element it writes: the compiled RoPE kernels
// are priced from their measured rows (several times their bytes' time), per rotated element.
TEST(TrainingOps, CompiledRopeIsPricedFromItsMeasuredRows) {
  for (Precision prec : {Precision::AmpBF16, Precision::BF16Pure}) {
    LlamaJob comp(prec, Framework::TorchCompile);
    OpContext cc(comp.m, comp.t, h200());
    const auto* p = hw::profile_of(h200());
    const double tokens = double(comp.t.micro_batch * comp.t.seq_len);
    // Forward: q and k as SDPA takes them (K repeated to the query heads); backward: rotated once
    // per query and KV head.
    const double fwd_elements = tokens * double(2 * comp.m.heads * comp.m.head_dim);
    const double bwd_elements = tokens * double((comp.m.heads + comp.m.kv_heads) * comp.m.head_dim);
    ASSERT_GT(comp.m.heads, comp.m.kv_heads);
    const bool amp = prec == Precision::AmpBF16;
    for (bool bwd : {false, true}) {
      const double rotated = bwd ? bwd_elements : fwd_elements;
      const auto ops = bwd ? layer_backward_ops(cc, 0) : layer_forward_ops(cc, 0);
      const std::string name = bwd ? "rope_repeat_bwd" : "rope_repeat";
      auto it = std::find_if(ops.begin(), ops.end(), [&](const OpTemplate& o) { return name == o.name; });
      ASSERT_NE(it, ops.end()) << name;
      const std::string table =
          std::string("compiled_rope_") + (amp ? "amp" : "pure") + (bwd ? "_bwd" : "_fwd");
      const auto want = hw::eager_op_seconds(*p, table, rotated);
      ASSERT_TRUE(want.has_value()) << table;
      EXPECT_DOUBLE_EQ(it->seconds, *want) << table;
      EXPECT_GT(it->seconds, 2 * h200().memory_bound(it->bytes).seconds) << table;
    }
  }
}

TEST(TrainingOps, EagerTableInterpolatesAndScales) {
  const auto* p = hw::profile_of(h200());
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->framework.has_value());
  const auto& f = *p->framework;
  const auto& row = f.elementwise_seconds.at("cast_f32_bf16");
  const double x0 = f.elementwise_elements.front(), x1 = f.elementwise_elements.back();
  EXPECT_DOUBLE_EQ(*hw::eager_op_seconds(*p, "cast_f32_bf16", x1), row.back());
  EXPECT_DOUBLE_EQ(*hw::eager_op_seconds(*p, "cast_f32_bf16", x0 / 4), row.front());  // launch-bound floor
  EXPECT_NEAR(*hw::eager_op_seconds(*p, "cast_f32_bf16", 2 * x1), 2 * row.back(), 1e-12);
  const double mid = *hw::eager_op_seconds(*p, "cast_f32_bf16", 3e6);
  EXPECT_GT(mid, *hw::eager_op_seconds(*p, "cast_f32_bf16", 1e6));
  EXPECT_LT(mid, *hw::eager_op_seconds(*p, "cast_f32_bf16", 1e7));
  EXPECT_FALSE(hw::eager_op_seconds(*p, "no_such_op", 1e6).has_value());
}

TEST(TrainingOps, EagerLlamaHostCostIsTheMeasuredBlock) {
  LlamaJob j(Precision::AmpBF16, Framework::PytorchEager);
  j.t.host_dispatch = HostDispatch::On;
  OpContext c(j.m, j.t, h200());
  const auto* p = hw::profile_of(h200());
  ASSERT_TRUE(p->framework->block_us.count("pytorch-eager/amp-bf16/plain"));
  const auto want = p->framework->block_us.at("pytorch-eager/amp-bf16/plain");
  EXPECT_NEAR(host_seconds(c, layer_forward_ops(c, 0), true, true), want.first * 1e-6, 1e-12);
  EXPECT_NEAR(host_seconds(c, layer_backward_ops(c, 0), false, true), want.second * 1e-6, 1e-12);
  j.t.recompute = model::Recompute::Full;
  OpContext ck(j.m, j.t, h200());
  const auto ckpt = p->framework->block_us.at("pytorch-eager/amp-bf16/checkpointed");
  EXPECT_NEAR(host_seconds(ck, layer_backward_ops(ck, 0), false, true), ckpt.second * 1e-6, 1e-12);
}

// Eager frameworks issue op by op: the measured block cost is spread over the layer's compute ops
// in proportion to the per-op dispatch model, nothing on comm or zero-time ops.
TEST(TrainingOps, EagerHostCostIsSpreadOverTheLayersOps) {
  LlamaJob j(Precision::BF16Pure, Framework::PytorchEager);
  j.t.host_dispatch = HostDispatch::On;
  OpContext c(j.m, j.t, h200());
  for (const bool fwd : {true, false}) {
    const auto ops = fwd ? layer_forward_ops(c, 0) : layer_backward_ops(c, 0);
    const auto per = host_seconds_per_op(c, ops, fwd, true);
    ASSERT_EQ(per.size(), ops.size());
    double sum = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      EXPECT_GE(per[i], 0.0);
      if (ops[i].stream != Stream::Compute || ops[i].seconds <= 0) {
        EXPECT_EQ(per[i], 0.0) << ops[i].name;
      }
      sum += per[i];
    }
    EXPECT_NEAR(sum, host_seconds(c, ops, fwd, true), 1e-12);
    if (fwd) {
      auto at = [&](const char* n) {
        for (std::size_t i = 0; i < ops.size(); ++i)
          if (std::string(ops[i].name) == n) return per[i];
        return -1.0;
      };
      // Shares follow the per-op dispatch model: same module or same aten count, same share.
      EXPECT_GT(at("rope_q"), 0.0);
      EXPECT_NEAR(at("rope_q"), at("rope_k"), 1e-15);
      EXPECT_GT(at("q_proj"), 0.0);
      EXPECT_NEAR(at("q_proj"), at("k_proj"), 1e-15);
    }
  }
}

// In the work graph each such op waits for its own host issue (a host op on the lane's host
// stream); Megatron keeps one host floor per pass.
// cuBLAS's memsets (framework.memsets, counted in PyTorch steps' traces): every GEMM of a PyTorch
// step pays the mean memset cost per call on top of its table time and eager gap; Megatron's
// GEMMs, never traced, do not; without the section nothing is added.
TEST(TrainingOps, PytorchGemmsCarryTheMemsetsOfTheirCalls) {
  const auto* p = hw::profile_of(h200());
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->framework && p->framework->memsets) << "the H200 profile counts them";
  const double per_call = hw::memset_seconds_per_gemm(*p);
  EXPECT_GT(per_call, 0.3e-6);
  EXPECT_LT(per_call, 3e-6);
  auto q_proj = [](const std::vector<OpTemplate>& ops) {
    auto it = std::find_if(ops.begin(), ops.end(),
                           [](const OpTemplate& o) { return std::string(o.name) == "q_proj"; });
    return it == ops.end() ? -1.0 : it->seconds;
  };
  LlamaJob eager(Precision::BF16Pure, Framework::PytorchEager),
      compiled(Precision::BF16Pure, Framework::TorchCompile);
  OpContext ce(eager.m, eager.t, h200()), cc(compiled.m, compiled.t, h200());
  EXPECT_DOUBLE_EQ(ce.memset_gemm_s, per_call);
  EXPECT_DOUBLE_EQ(cc.memset_gemm_s, per_call);
  const hw::GemmShape s{eager.t.micro_batch * eager.t.seq_len, eager.m.heads * eager.m.head_dim,
                        eager.m.hidden, ce.gemm_dtype};
  EXPECT_DOUBLE_EQ(q_proj(layer_forward_ops(ce, 0)),
                   h200().gemm(s).seconds + h200().eager_kernel_gap_seconds() + per_call);
  Job megatron(Precision::BF16Mixed);
  OpContext cm(megatron.m, megatron.t, h200());
  EXPECT_EQ(cm.framework, Framework::Megatron);
  EXPECT_EQ(cm.memset_gemm_s, 0.0);
  // A profile without the section prices no memsets.
  Json j = Json::parse(hw::default_profile_json("h200-sxm-141gb"));
  j["framework"].erase("memsets");
  const hw::CalibratedCostModel bare(hw::parse_profile(j, "no-memsets"), hw::find_gpu("h200-sxm-141gb"));
  OpContext cb(eager.m, eager.t, bare);
  EXPECT_EQ(cb.memset_gemm_s, 0.0);
  EXPECT_NEAR(q_proj(layer_forward_ops(ce, 0)) - q_proj(layer_forward_ops(cb, 0)), per_call, 1e-12);
}

TEST(TrainingOps, EagerGpuOpsWaitForTheirHostIssue) {
  LlamaJob j(Precision::BF16Pure, Framework::PytorchEager);
  j.t.host_dispatch = HostDispatch::On;
  const WorkGraph g = build_work_graph(j.m, j.c, j.t, h200());
  int issues = 0;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (std::string(g.ops[i].name) != "host_issue") continue;
    ++issues;
    EXPECT_EQ(g.ops[i].stream, Stream::Host);
    EXPECT_GT(g.ops[i].seconds, 0.0);
    ASSERT_LT(i + 1, g.ops.size());  // the GPU op it issues comes right after it and waits for it
    const auto& d = g.ops[i + 1].deps;
    EXPECT_NE(std::find(d.begin(), d.end(), int(i)), d.end()) << g.ops[i + 1].name;
  }
  EXPECT_GT(issues, 20 * j.m.layers);
  LlamaJob mg(Precision::BF16Pure, Framework::Megatron);
  mg.t.host_dispatch = HostDispatch::On;
  const WorkGraph gm = build_work_graph(mg.m, mg.c, mg.t, h200());
  EXPECT_EQ(std::count_if(gm.ops.begin(), gm.ops.end(),
                          [](const Op& o) { return std::string(o.name) == "host_issue"; }),
            0);
}

// The profile keeps host costs from several machine starts: their median, and a host band that the
// uncertainty edges apply to every host cost.
TEST(TrainingOps, HostBandScalesTheMeasuredBlock) {
  const auto* p = hw::profile_of(h200());
  ASSERT_TRUE(p->framework->block_runs.count("pytorch-eager/amp-bf16/plain"));
  auto runs = p->framework->block_runs.at("pytorch-eager/amp-bf16/plain");
  ASSERT_GE(runs.size(), 2u);
  std::vector<double> fwd;
  for (const auto& r : runs) fwd.push_back(r.first);
  std::sort(fwd.begin(), fwd.end());
  const std::size_t n = fwd.size();
  const double median = n % 2 ? fwd[n / 2] : 0.5 * (fwd[n / 2 - 1] + fwd[n / 2]);
  EXPECT_NEAR(p->framework->block_us.at("pytorch-eager/amp-bf16/plain").first, median, 1e-9);
  const hw::SpreadBands bands = hw::spread_bands(*p);
  ASSERT_TRUE(bands.host.has_value());
  EXPECT_LT(bands.host->low, 0);
  EXPECT_GT(bands.host->high, 0);
  const hw::SpreadCostModel lo(h200(), bands, hw::SpreadCostModel::Edge::Low),
      hi(h200(), bands, hw::SpreadCostModel::Edge::High);
  LlamaJob j(Precision::AmpBF16, Framework::PytorchEager);
  j.t.host_dispatch = HostDispatch::On;
  OpContext mid(j.m, j.t, h200()), low(j.m, j.t, lo), high(j.m, j.t, hi);
  const double m = host_seconds(mid, layer_forward_ops(mid, 0), true, true);
  EXPECT_NEAR(host_seconds(low, layer_forward_ops(low, 0), true, true), m * (1 + bands.host->low), 1e-12);
  EXPECT_NEAR(host_seconds(high, layer_forward_ops(high, 0), true, true), m * (1 + bands.host->high), 1e-12);
}

// Op-level selective checkpointing prices a block's host time as measured under the policy where the
// profile has that entry ("…/selective-op": the policy's dispatch mode runs on every op of the forward
// and of the recomputation), else as a checkpointed block.
TEST(TrainingOps, SelectiveOpBlockHostIsItsOwnWhereMeasured) {
  const hw::Profile& p = *hw::profile_of(h200());
  const std::string own_key = "pytorch-eager/amp-bf16/selective-op",
                    ckpt_key = "pytorch-eager/amp-bf16/checkpointed";
  ASSERT_TRUE(p.framework->block_us.count(own_key));
  const auto own = p.framework->block_us.at(own_key), ckpt = p.framework->block_us.at(ckpt_key);
  EXPECT_GT(own.first, ckpt.first);  // the policy's host work on top of a checkpointed block's
  LlamaJob j(Precision::AmpBF16, Framework::PytorchEager);
  j.t.host_dispatch = HostDispatch::On;
  j.t.recompute = model::Recompute::SelectiveOp;
  const HostCosts with = host_costs_of(j.t, h200());
  ASSERT_TRUE(with.block.has_value());
  EXPECT_DOUBLE_EQ(with.block->first, own.first * 1e-6);
  EXPECT_DOUBLE_EQ(with.block->second, own.second * 1e-6);
  hw::Profile without_entry = p;
  without_entry.framework->block_us.erase(own_key);
  const hw::CalibratedCostModel without(without_entry, hw::find_gpu("h200-sxm-141gb"));
  const HostCosts fallback = host_costs_of(j.t, without);
  ASSERT_TRUE(fallback.block.has_value());
  EXPECT_DOUBLE_EQ(fallback.block->first, ckpt.first * 1e-6);
  EXPECT_DOUBLE_EQ(fallback.block->second, ckpt.second * 1e-6);
  // Full checkpointing never takes the policy's entry.
  j.t.recompute = model::Recompute::Full;
  EXPECT_DOUBLE_EQ(host_costs_of(j.t, h200()).block->first, ckpt.first * 1e-6);
}

TEST(TrainingOps, HostCostIsChargedPerModule) {
  Job amp(Precision::AmpBF16);
  amp.t.host_dispatch = HostDispatch::On;
  OpContext c(amp.m, amp.t, h200());
  auto f = layer_forward_ops(c, 0);
  const auto* p = hw::profile_of(h200());
  auto us = [&](const char* k) { return hw::module_host_us(*p, k)->first * 1e-6; };
  // Forward of a GPT block: 2 LayerNorm, 4 Linear, SDPA, GELU, 2 adds; the casts inside cost nothing.
  const double want = 2 * us("layernorm") + 4 * us("linear") + us("sdpa") + us("gelu") + 2 * us("add");
  EXPECT_NEAR(host_seconds(c, f, true, true), want, 1e-9);
  // Without a framework profile nothing is charged.
  hw::RooflineCostModel roof(amp.c.gpu);
  Job off(Precision::AmpBF16);
  OpContext cr(off.m, off.t, roof);
  EXPECT_EQ(host_seconds(cr, layer_forward_ops(cr, 0), true, true), 0.0);
}

}  // namespace
}  // namespace infraplan::strat
