#include "simulator/engine_preset.hpp"

#include <gtest/gtest.h>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"
#include "simulator/execution_backend.hpp"
#include "simulator/serving_options.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {
std::string error_of(const Json& serving) {
  try {
    strat::ServingConfig core;
    engine_options_from_json(serving, core);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
BatchShape decodes(int n, std::int64_t ctx) {
  BatchShape b;
  for (int i = 0; i < n; ++i) b.items.push_back({1, ctx, false, true});
  return b;
}
BackendOptions with_engine(const std::string& name, int max_num_seqs = 256) {
  BackendOptions o;
  o.engine = engine_preset(name, max_num_seqs);
  return o;
}

}  // namespace

TEST(EnginePreset, EveryPresetParsesAndUnknownNamesListTheValidOnes) {
  for (const auto& n : engine_preset_names()) {
    strat::ServingConfig core;
    const auto e = engine_options_from_json({{"engine", n}}, core);
    EXPECT_EQ(e.engine.name, n);
    EXPECT_FALSE(e.engine.graphs.sizes.empty()) << n;
    EXPECT_TRUE(std::is_sorted(e.engine.graphs.sizes.begin(), e.engine.graphs.sizes.end())) << n;
    EXPECT_EQ(e.engine.to_json()["name"], n);
  }
  const std::string err = error_of({{"engine", "vllm-v2"}});
  EXPECT_NE(err.find("serving.engine='vllm-v2' is not a known engine"), std::string::npos) << err;
  EXPECT_NE(err.find("infraplan, vllm, tensorrt-llm, sglang"), std::string::npos) << err;
  EXPECT_NE(error_of({{"admission", "greedy"}}).find("serving.admission"), std::string::npos);
  EXPECT_NE(error_of({{"cuda_graph", {{"sizes", {4, 0}}}}}).find("serving.cuda_graph.sizes"),
            std::string::npos);
  EXPECT_NE(error_of({{"cuda_graph", {{"sizes", Json::array()}}}}).find("non-empty"), std::string::npos);
  EXPECT_NE(error_of({{"cuda_graph", {{"max_size", 0}}}}).find("serving.cuda_graph.max_size"),
            std::string::npos);
  EXPECT_NE(error_of({{"cuda_graph", {{"padded", true}}}}).find("padding"), std::string::npos)
      << "unknown keys get a did-you-mean hint";
  EXPECT_NE(error_of({{"host_us_per_seq", -1}}).find("serving.host_us_per_seq"), std::string::npos);
}

TEST(EnginePreset, DefaultsOverridesAndAdmission) {
  strat::ServingConfig core;
  const auto d = engine_options_from_json(Json::object(), core);
  EXPECT_EQ(d.engine.name, "infraplan");
  EXPECT_EQ(d.sched.admission, Admission::OnDemand);
  const auto t = engine_options_from_json({{"engine", "tensorrt-llm"}}, core);
  EXPECT_EQ(t.sched.admission, Admission::Reserve) << "TensorRT-LLM defaults to GUARANTEED_NO_EVICT";
  EXPECT_FALSE(t.engine.graphs.padding);
  const auto o = engine_options_from_json({{"engine", "tensorrt-llm"},
                                           {"admission", "on_demand"},
                                           {"host_overhead_us", 10},
                                           {"host_overlap", false},
                                           {"cuda_graph", {{"sizes", {16, 4, 8, 4}}, {"padding", true}}}},
                                          core);
  EXPECT_EQ(o.sched.admission, Admission::OnDemand);
  EXPECT_EQ(o.engine.host_step_us, 10);
  EXPECT_FALSE(o.engine.host_overlap);
  EXPECT_EQ(o.engine.graphs.sizes, (std::vector<int>{4, 8, 16}));
  EXPECT_EQ(vllm_capture_sizes(256).back(), 512);
  EXPECT_EQ(vllm_capture_sizes(64).back(), 128) << "min(2 · max_num_seqs, 512)";
  EXPECT_EQ(vllm_capture_sizes(256).size(), 3u + 31u + 17u);
}

TEST(EnginePreset, DecodeStepsPadToTheNextCapturedSize) {
  CudaGraphs g;
  g.sizes = {1, 2, 4, 8, 16, 24, 32};
  EXPECT_EQ(g.captured_size(1), 1);
  EXPECT_EQ(g.captured_size(3), 4);
  EXPECT_EQ(g.captured_size(17), 24);
  EXPECT_EQ(g.captured_size(33), 0) << "beyond the largest captured size: eager";
  g.padding = false;
  EXPECT_EQ(g.captured_size(3), 0) << "without padding only captured sizes replay";
  EXPECT_EQ(g.captured_size(16), 16);
  g.enabled = false;
  EXPECT_EQ(g.captured_size(16), 0);
}

TEST(EnginePreset, GraphReplayComputesThePaddedBatch) {
  hw::RooflineCostModel cm(hw::find_gpu("h200-sxm-141gb"));
  strat::ServingConfig s;
  SimulatedBackend vllm(model::preset("llama2-7b"), s, cm, nullptr, with_engine("vllm"));
  const StepCost c5 = vllm.step(decodes(5, 1000)), c8 = vllm.step(decodes(8, 1000));
  EXPECT_EQ(c5.graph_tokens, 8);
  EXPECT_EQ(c8.graph_tokens, 8);
  EXPECT_EQ(c5.gemm_s, c8.gemm_s) << "5 sequences run the GEMMs of the captured 8";
  EXPECT_EQ(vllm.step(decodes(513, 1000)).graph_tokens, 0) << "past the largest captured size";
  SimulatedBackend trt(model::preset("llama2-7b"), s, cm, nullptr, with_engine("tensorrt-llm"));
  EXPECT_EQ(trt.step(decodes(33, 1000)).graph_tokens, 0) << "33 is not captured and padding is off";
  EXPECT_EQ(trt.step(decodes(32, 1000)).graph_tokens, 32);
  BatchShape mixed = decodes(4, 1000);
  mixed.items.push_back({200, 200, true, true});
  EXPECT_EQ(vllm.step(mixed).graph_tokens, 208)
      << "vLLM replays piecewise graphs for mixed steps (204 → 208)";
  SimulatedBackend own(model::preset("llama2-7b"), s, cm, nullptr, with_engine("infraplan"));
  EXPECT_EQ(own.step(mixed).graph_tokens, 0) << "the infraplan engine runs mixed steps eagerly";
}

// The measured H200 profile. A small model's batch-1 decode step replaying a graph costs its
// kernels' GPU times; eagerly each layer waits for the host to issue its kernels, more so when
// eager PyTorch issues them. A 7B model's GEMMs are long enough for the host to keep ahead.
TEST(EnginePreset, EagerStepsPayTheHostsIssueRateAndGraphsDoNot) {
  const auto gpu = hw::find_gpu("h200-sxm-141gb");
  hw::CalibratedCostModel cm(hw::default_profile("h200-sxm-141gb"), gpu);
  strat::ServingConfig s;
  BackendOptions graph = BackendOptions::without_host(), eager = graph, framework = graph;
  eager.engine.graphs.enabled = framework.engine.graphs.enabled = false;
  framework.engine.eager_issue = EagerIssue::Framework;
  const auto small = model::preset("gpt2-350m");
  SimulatedBackend g(small, s, cm, nullptr, graph), e(small, s, cm, nullptr, eager),
      f(small, s, cm, nullptr, framework);
  const StepCost cg = g.step(decodes(1, 512)), ce = e.step(decodes(1, 512)), cf = f.step(decodes(1, 512));
  EXPECT_EQ(cg.graph_tokens, 1);
  EXPECT_LE(cg.launch_s, cm.launch_overhead_seconds()) << "one graph launch";
  EXPECT_GE(ce.total_s, cg.total_s - cm.launch_overhead_seconds() - 1e-12)
      << "eager never beats the replay by more than its one launch";
  EXPECT_GT(cf.total_s, 1.5 * cg.total_s)
      << "eager PyTorch cannot issue this small model's kernels fast enough";
  EXPECT_NEAR(cf.launch_s + cf.gemm_s + cf.attention_s + cf.other_s, cf.total_s, 1e-12);
  EXPECT_GE(cf.total_s, (24 * 9 + 4) * cm.framework_op_seconds() - 1e-12);
  EXPECT_NEAR(cf.total_s, (24 * 9 + 4) * cm.framework_op_seconds(), 1e-5)
      << "host-bound layers: every launch at the framework's dispatch time (the LM head is a little longer)";
  const auto big = model::preset("llama2-7b");
  SimulatedBackend g7(big, s, cm, nullptr, graph), f7(big, s, cm, nullptr, framework);
  const StepCost cg7 = g7.step(decodes(1, 512)), cf7 = f7.step(decodes(1, 512));
  EXPECT_GT(cg7.total_s, 13.5e9 / (gpu.hbm_GBps * 1e9)) << "at least one read of the weights";
  EXPECT_EQ(cg7.launches, 32 * (4 + 4 + 1) + 2 + 1 + 1)
      << "9 kernels per layer, embedding, norm, head, argmax";
  EXPECT_LE(cf7.launch_s, cf7.launches * cm.eager_kernel_gap_seconds() + 1e-12)
      << "7B GEMMs keep the GPU busier than the host: only the eager gaps between kernels remain";
  // An eager step of the same kernels pays the measured gap between dependent kernels on each.
  BackendOptions eager7 = graph;
  eager7.engine.graphs.enabled = false;
  SimulatedBackend e7(big, s, cm, nullptr, eager7);
  const StepCost ce7 = e7.step(decodes(1, 512));
  ASSERT_GT(cm.eager_kernel_gap_seconds(), 0) << "the H200 profile measures the gap";
  EXPECT_NEAR(ce7.total_s - (cg7.total_s - cg7.launch_s), ce7.launches * cm.eager_kernel_gap_seconds(), 1e-9);
}

TEST(EnginePreset, OverlappedHostWorkHidesBehindTheGpu) {
  hw::RooflineCostModel cm(hw::find_gpu("h200-sxm-141gb"));
  strat::ServingConfig s;
  BackendOptions sync = BackendOptions::without_host(), overlap;
  sync.engine.host_step_us = 200;
  overlap = sync;
  overlap.engine.host_overlap = true;
  SimulatedBackend a(model::preset("llama2-7b"), s, cm, nullptr, sync),
      b(model::preset("llama2-7b"), s, cm, nullptr, overlap);
  const StepCost ca = a.step(decodes(8, 1000)), cb = b.step(decodes(8, 1000));
  EXPECT_NEAR(ca.host_s, 200e-6, 1e-12);
  EXPECT_EQ(cb.host_s, 0) << "200 µs of host work hides behind a multi-ms step";
  EXPECT_NEAR(ca.total_s - cb.total_s, 200e-6, 1e-12);
}

// W8A8 (fp8 weights): the infraplan engine quantizes each layer's GEMM inputs at every step (4
// quantize kernels and one amax reduction per layer); a batch-1 decode step carries those 5 launches
// per layer at a kernel's floor at least, the override removes them, 16-bit weights never have them.
TEST(EnginePreset, Fp8WeightsPayTheActivationQuantizeKernels) {
  const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  const auto m = model::preset("llama2-7b");
  strat::ServingConfig fp8;
  fp8.weights = strat::WeightQuant::FP8;
  const BackendOptions own = with_engine("infraplan");
  EXPECT_EQ(own.engine.layer.activation_quant, 5);
  BackendOptions none = own;
  none.engine.layer.activation_quant = 0;
  SimulatedBackend with_q(m, fp8, *cm, nullptr, own), without_q(m, fp8, *cm, nullptr, none);
  const StepCost a = with_q.step(decodes(1, 1000)), b = without_q.step(decodes(1, 1000));
  EXPECT_GE(a.other_s - b.other_s, 5.0 * double(m.layers) * cm->graph_kernel_seconds() * 0.999);
  EXPECT_EQ(a.gemm_s, b.gemm_s);
  strat::ServingConfig bf16;
  SimulatedBackend b1(m, bf16, *cm, nullptr, own), b2(m, bf16, *cm, nullptr, none);
  EXPECT_EQ(b1.step(decodes(1, 1000)).total_s, b2.step(decodes(1, 1000)).total_s);
  strat::ServingConfig core;
  EXPECT_EQ(engine_options_from_json({{"kernels", {{"activation_quant", 0}}}}, core).engine.layer.activation_quant, 0);
  EXPECT_NE(error_of({{"kernels", {{"activation_quant", -1}}}}).find("serving.kernels.activation_quant"),
            std::string::npos);
  EXPECT_EQ(engine_preset("vllm", 256).layer.activation_quant, 0) << "not known for the other engines";
}

TEST(EnginePreset, EnginesOwnDecodeKernelPaysForPartialKeyTiles) {
  // The infraplan engine's decode kernel walks 64-key tiles (the profile records the tile and the
  // partial tile's measured share): 256 sequences of 129 keys cost more than of 128 — part of the
  // step to 192 — while vLLM's kernel is priced at its keys.
  const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  const auto m = model::preset("llama2-7b");
  strat::ServingConfig s;
  SimulatedBackend own(m, s, *cm, nullptr, with_engine("infraplan")), vllm(m, s, *cm, nullptr, with_engine("vllm"));
  const double t128 = own.step(decodes(256, 128)).attention_s, t129 = own.step(decodes(256, 129)).attention_s,
               t192 = own.step(decodes(256, 192)).attention_s;
  const double phi = cm->paged_attention()->params().partial_tile;
  ASSERT_GT(phi, 0);
  EXPECT_GT(t129 - t128, 0.8 * phi * (t192 - t128));
  EXPECT_LT(t129, t192);
  EXPECT_NEAR(own.step(decodes(256, 191)).attention_s, t192, 0.03 * t192) << "one key short of a whole tile";
  const double v128 = vllm.step(decodes(256, 128)).attention_s, v129 = vllm.step(decodes(256, 129)).attention_s;
  EXPECT_LT(v129 - v128, 0.1 * (t129 - t128));
}

TEST(EnginePreset, Fp8KvOnTheEnginesOwnKernelsTakesTheBf16AttentionTime) {
  // The infraplan engine widens fp8 KV tiles to bf16 and computes in bf16 (measured at the bf16
  // kernel's time); other engines' fp8 attention is priced by its bytes. Decode at batch 64 (inside
  // the engine kernel's measured grid) and 256 (past it), and a step with a prefill chunk.
  const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  const auto m = model::preset("llama2-7b");
  strat::ServingConfig bf16, fp8;
  fp8.kv_dtype = Dtype::FP8;
  for (int n : {64, 256}) {
    const BackendOptions own = with_engine("infraplan"), vllm = with_engine("vllm");
    SimulatedBackend own16(m, bf16, *cm, nullptr, own), own8(m, fp8, *cm, nullptr, own);
    EXPECT_DOUBLE_EQ(own8.step(decodes(n, 1000)).attention_s, own16.step(decodes(n, 1000)).attention_s) << n;
    SimulatedBackend v16(m, bf16, *cm, nullptr, vllm), v8(m, fp8, *cm, nullptr, vllm);
    EXPECT_LT(v8.step(decodes(n, 1000)).attention_s, 0.7 * v16.step(decodes(n, 1000)).attention_s) << n;
  }
  BatchShape mixed = decodes(8, 1000);
  BatchItem p;
  p.prefill = true;
  p.q_tokens = 2048;
  p.context = 2048;
  p.samples = true;
  mixed.items.push_back(p);
  SimulatedBackend own16(m, bf16, *cm, nullptr, with_engine("infraplan")),
      own8(m, fp8, *cm, nullptr, with_engine("infraplan"));
  EXPECT_DOUBLE_EQ(own8.step(mixed).attention_s, own16.step(mixed).attention_s);
}
