// The trace reader, step finder, kernel classifier and profile writer on a synthetic trace with
// known answers (profiler_trace/testdata/make_synthetic_trace.py: a 2-layer LLaMA-architecture
// AMP step, B = 2, S = 128, hidden 256, 4 heads of 64, FFN 512, vocabulary 1024).
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "hardware/framework_costs.hpp"
#include "hardware/profile.hpp"
#include "common/error.hpp"
#include "profiler_trace/eager_table.hpp"
#include "profiler_trace/trace_gpu.hpp"
#include "profiler_trace/trace_profile.hpp"

namespace infraplan::ptrace {
namespace {

const std::string kFixture =
    std::string(INFRAPLAN_SOURCE_DIR) + "/profiler_trace/testdata/synthetic_llama_step.json";
constexpr std::int64_t B = 2, S = 128, H = 256, FFN = 512, V = 1024, T = B * S;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("infraplan_trace_test_" + name)).string();
}

struct Classified {
  KinetoTrace trace;
  TraceStep step;
  std::vector<ClassifiedWork> work;
};

const Classified& fixture() {
  static const Classified c = [] {
    Classified x;
    x.trace = read_kineto_trace(kFixture);
    x.step = find_step(x.trace);
    x.work = classify(x.step);
    return x;
  }();
  return c;
}

TEST(KinetoTrace, ReadsEventsDevicesAndDropsTheRest) {
  const auto& t = fixture().trace;
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].sms, 132);
  EXPECT_EQ(t.devices[0].compute_major, 9);
  std::map<EventKind, int> n;
  for (const auto& e : t.events) ++n[e.kind];
  EXPECT_EQ(n[EventKind::Kernel], 101);
  EXPECT_EQ(n[EventKind::Memcpy], 1);
  EXPECT_EQ(n[EventKind::Runtime], 102);
  EXPECT_EQ(n[EventKind::FlowStart], 102);
  EXPECT_EQ(n[EventKind::UserAnnotation], 2);
  for (const auto& e : t.events) EXPECT_NE(e.name, "torch/nn/modules/module.py(1750): _call_impl");
  EXPECT_EQ(t.metadata.at("cuda_runtime_version"), "13000");
  EXPECT_EQ(short_dtype("c10::BFloat16"), "bf16");
  EXPECT_EQ(short_dtype("float"), "f32");
}

TEST(KinetoTrace, ReadsGzipAndRefusesMalformedInput) {
  const std::string text = read_maybe_gzip(kFixture, kMaxTraceBytes);
  const std::string gz = temp_path("step.json.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_TRUE(f);
  ASSERT_EQ(gzwrite(f, text.data(), unsigned(text.size())), int(text.size()));
  gzclose(f);
  EXPECT_EQ(read_kineto_trace(gz).events.size(), fixture().trace.events.size());
  EXPECT_THROW(read_kineto_trace(gz, 1000), Error);  // over the size bound

  const std::string cut = temp_path("cut.json");
  std::ofstream(cut) << text.substr(0, text.size() / 2);
  try {
    read_kineto_trace(cut);
    FAIL() << "a truncated trace was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_kineto_trace("{\"schemaVersion\": 1}", "x.json"), Error);
  EXPECT_THROW(parse_kineto_trace("PK\x03\x04", "x.zip"), Error);
  EXPECT_THROW(read_kineto_trace(temp_path("missing.json")), Error);
  std::filesystem::remove(gz);
  std::filesystem::remove(cut);
}

TEST(TraceStep, FindsTheStepAndLinksEveryKernelToItsOp) {
  const auto& s = fixture().step;
  EXPECT_EQ(s.name, "ProfilerStep#3");
  EXPECT_EQ(s.steps_in_trace, 1);
  EXPECT_EQ(s.work.size(), 102u);
  for (const auto& w : s.work) {
    EXPECT_GE(w.op, 0) << w.gpu->name;
    EXPECT_NE(w.launch, nullptr) << w.gpu->name;
  }
  EXPECT_THROW(find_step(fixture().trace, 7), Error);
  EXPECT_EQ(find_step(fixture().trace, 3).work.size(), 102u);
}

TEST(TraceStep, LinksThroughFlowsWhenKernelsCarryNoIds) {
  // Strip "External id" and "correlation" from GPU work: the ac2g flows still tie each kernel
  // to its launch call and the op around the call.
  KinetoTrace t = fixture().trace;
  for (auto& e : t.events)
    if (e.kind == EventKind::Kernel || e.kind == EventKind::Memcpy || e.kind == EventKind::Runtime) {
      if (e.kind != EventKind::Runtime) e.external_id = -1;
      e.correlation = -1;
    }
  const TraceStep s = find_step(t);
  ASSERT_EQ(s.work.size(), 102u);
  const auto work = classify(s);
  std::map<KernelCategory, int> n;
  for (const auto& w : work) ++n[w.category];
  EXPECT_EQ(n[KernelCategory::Gemm], 27);
  EXPECT_EQ(n[KernelCategory::Attention], 8);
}

TEST(KernelClassify, CategoriesPhasesAndFramework) {
  const auto& work = fixture().work;
  std::map<KernelCategory, int> n;
  std::map<Phase, int> ph;
  for (const auto& w : work) ++n[w.category], ++ph[w.phase];
  EXPECT_EQ(n[KernelCategory::Gemm], 27);      // (4 per layer × 2 layers + LM head) × (fwd, dgrad, wgrad)
  EXPECT_EQ(n[KernelCategory::Attention], 8);  // 2 forward + 2 × 3 backward kernels
  EXPECT_EQ(n[KernelCategory::Norm], 23);      // fused 4 + 8, decomposed final norm 6 + 5
  EXPECT_EQ(n[KernelCategory::Copy], 21);      // weight casts 9 + 9 back, logits 2, input copy
  EXPECT_EQ(n[KernelCategory::Optimizer], 2);
  EXPECT_EQ(n[KernelCategory::Elementwise], 21);
  EXPECT_EQ(n[KernelCategory::Communication], 0);
  EXPECT_EQ(n[KernelCategory::Other], 0);
  EXPECT_EQ(ph[Phase::Optimizer], 2);
  EXPECT_EQ(ph[Phase::Recompute], 0);
  EXPECT_GT(ph[Phase::Backward], ph[Phase::Forward]);
  EXPECT_EQ(detect_framework(work), "pytorch-eager");
}

TEST(KernelClassify, GemmShapesAndLayouts) {
  std::map<std::string, std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>> by_layout;
  for (const auto& w : fixture().work)
    if (w.gemm) by_layout[w.gemm->layout].insert({w.gemm->m, w.gemm->n, w.gemm->k});
  ASSERT_EQ(by_layout.size(), 3u);
  // Forward x·Wᵀ: (T, out, in); input gradient dY·W: (T, in, out); weight gradient (dYᵀ·X): (out, in, T).
  EXPECT_TRUE(by_layout["TN"].count({T, 3 * H, H}));
  EXPECT_TRUE(by_layout["TN"].count({T, V, H}));
  EXPECT_TRUE(by_layout["NN"].count({T, FFN, H}));
  EXPECT_TRUE(by_layout["NN"].count({T, H, 2 * FFN}));
  EXPECT_TRUE(by_layout["NT"].count({2 * FFN, H, T}));
  EXPECT_TRUE(by_layout["NT"].count({V, H, T}));
  EXPECT_EQ(by_layout["TN"].size(), 4u);  // the up projection (2·FFN = 1024) and the head (V = 1024) coincide
}

TEST(KernelClassify, AttentionAndKernelTypes) {
  int fwd = 0, bwd = 0;
  std::set<std::string> types, composites;
  for (const auto& w : fixture().work) {
    if (w.attention) {
      EXPECT_EQ(w.attention->batch, B);
      EXPECT_EQ(w.attention->q_len, S);
      EXPECT_EQ(w.attention->heads, 4);
      EXPECT_EQ(w.attention->head_dim, 64);
      EXPECT_TRUE(w.attention->causal);
      EXPECT_EQ(w.attention->backend, "flash");
      (w.attention->backward ? bwd : fwd)++;
    }
    if (!w.type.empty()) types.insert(w.type);
    if (!w.composite_type.empty()) composites.insert(w.composite_type);
  }
  EXPECT_EQ(fwd, 2);
  EXPECT_EQ(bwd, 6);
  for (const char* want :
       {"cast_f32_bf16", "cast_bf16_f32", "rms_norm_f32_fwd", "rms_norm_f32_bwd", "add_f32_bf16",
        "silu_bf16_fwd", "silu_bf16_bwd", "mul_bf16", "log_softmax_f32_fwd", "log_softmax_f32_bwd",
        "nll_loss_f32_fwd", "fill_f32", "embedding_f32_bwd"})
    EXPECT_TRUE(types.count(want)) << want;
  for (const char* want :
       {"rms_norm_bf16_fwd", "rms_norm_bf16_bwd", "cross_entropy_f32_fwd", "embedding_f32_fwd"})
    EXPECT_TRUE(composites.count(want)) << want;
}

TEST(StepSummary, AddsUp) {
  const auto s = summarize(fixture().step, fixture().work, kFixture);
  double sum = 0;
  int kernels = 0;
  for (const auto& c : s.by_category) sum += c.seconds, kernels += c.kernels;
  EXPECT_EQ(kernels, 102);
  EXPECT_NEAR(sum, s.gpu_kernel_seconds, 1e-12);
  EXPECT_LE(s.gpu_busy_seconds, s.gpu_span_seconds + 1e-12);
  EXPECT_LE(s.gpu_span_seconds, s.wall_seconds);
  EXPECT_NEAR(s.gpu_busy_seconds + s.host_wait_seconds + s.idle_other_seconds, s.gpu_span_seconds, 1e-9);
  EXPECT_EQ(s.unlinked, 0);
}

TEST(TraceGpu, FromDevicePropertiesAndAgainstTheUsersChoice) {
  const auto& c = fixture();
  EXPECT_EQ(trace_gpu(c.trace, c.step, ""), "h200-sxm-141gb");
  EXPECT_EQ(trace_gpu(c.trace, c.step, "h200-sxm-141gb"), "h200-sxm-141gb");
  try {
    trace_gpu(c.trace, c.step, "h100-sxm5-80gb");
    FAIL() << "a trace of another GPU was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NVIDIA H200"), std::string::npos) << m;
    EXPECT_NE(m.find("h100-sxm5-80gb"), std::string::npos) << m;
  }
  KinetoTrace none = c.trace;
  none.devices.clear();
  EXPECT_THROW(trace_gpu(none, c.step, ""), Error);
  EXPECT_EQ(trace_gpu(none, c.step, "h100-sxm5-80gb"), "h100-sxm5-80gb");
  EXPECT_THROW(trace_gpu(c.trace, c.step, "h900"), Error);
  // The H200 NVL (600 W card) has the SXM's chip, SMs and memory: its trace is not the SXM's.
  KinetoTrace nvl = c.trace;
  for (auto& d : nvl.devices) d.name = "NVIDIA H200 NVL";
  try {
    trace_gpu(nvl, c.step, "");
    FAIL() << "an H200 NVL trace was taken for the SXM board";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NVIDIA H200 NVL"), std::string::npos) << m;
    EXPECT_NE(m.find("--gpu h200-sxm-141gb with --base"), std::string::npos) << m;
  }
  // Named on purpose (with the owner's own base profile), the same chip is accepted; another is not.
  EXPECT_EQ(trace_gpu(nvl, c.step, "h200-sxm-141gb"), "h200-sxm-141gb");
  EXPECT_THROW(trace_gpu(nvl, c.step, "h100-sxm5-80gb"), Error);
}

TEST(TraceProfile, WritesAProfileTheCostModelReads) {
  TraceCalibrationOptions o;
  o.trace_path = kFixture;
  const auto r = calibrate_from_trace(o);
  EXPECT_EQ(r.gpu, "h200-sxm-141gb");
  EXPECT_EQ(r.framework, "pytorch-eager");
  const hw::Profile p = hw::parse_profile(r.profile, "out");
  ASSERT_TRUE(p.framework);
  EXPECT_EQ(p.framework->name, "pytorch-eager");
  // The base's validation record described the base's tables: it does not come along.
  EXPECT_TRUE(p.validation_error.empty());
  // The traced eager calls come back at their element counts: a weight cast of the [3h, h] QKV
  // weight (fp32 → bf16) took 2 µs + 6 bytes per element at 3 TB/s in the synthetic trace.
  const double qkv_w = 3.0 * H * H;
  EXPECT_NEAR(*hw::eager_op_seconds(p, "cast_f32_bf16", qkv_w), (2.0 + qkv_w * 6 / 3e12 * 1e6) * 1e-6, 2e-9);
  EXPECT_TRUE(hw::eager_op_seconds(p, "rms_norm_bf16_bwd", double(T * H)).has_value());
  // Base rows the trace did not touch survive.
  EXPECT_TRUE(hw::eager_op_seconds(p, "gelu_bf16_fwd", 1e6).has_value());
  // A traced kernel's time is its time at the traced clock: no clock share; an untouched base row
  // keeps the base's.
  EXPECT_DOUBLE_EQ(hw::eager_op_clock_share(p, "cast_f32_bf16"), 0.0);
  EXPECT_DOUBLE_EQ(hw::eager_op_clock_share(p, "rms_norm_bf16_bwd"), 0.0);
  const hw::Profile base_profile = hw::default_profile("h200-sxm-141gb");
  EXPECT_GT(hw::eager_op_clock_share(base_profile, "rms_norm_bf16_bwd"), 0.2);
  EXPECT_DOUBLE_EQ(hw::eager_op_clock_share(p, "gelu_bf16_fwd"),
                   hw::eager_op_clock_share(base_profile, "gelu_bf16_fwd"));
  EXPECT_GT(hw::eager_op_clock_share(p, "gelu_bf16_fwd"), 0.3);
  // Exact GEMM shapes with their layouts.
  bool found = false;
  for (const auto& g : p.gemm_exact)
    if (g.m == T && g.n == 3 * H && g.k == H) {
      found = true;
      EXPECT_NEAR(g.seconds, (2.0 + 2.0 * T * 3 * H * H / 400e12 * 1e6) * 1e-6, 1e-9);
    }
  EXPECT_TRUE(found);
  // Other token counts of a traced weight: a row along m through the traced point.
  bool row_found = false;
  for (const auto& row : p.gemm_rows)
    if (row.n == 3 * H && row.k == H) {
      row_found = true;
      for (const auto& pt : row.points) {
        if (pt.m == T) {
          EXPECT_NEAR(pt.seconds, (2.0 + 2.0 * T * 3 * H * H / 400e12 * 1e6) * 1e-6, 1e-9);
        }
      }
      EXPECT_GE(row.points.size(), 5u);
    }
  EXPECT_TRUE(row_found);
  ASSERT_TRUE(r.profile["tables"].contains("attention_points"));
  EXPECT_EQ(r.profile["tables"]["attention_points"].size(), 1u);
  EXPECT_GT(r.profile["tables"]["attention_points"][0]["backward_seconds"].get<double>(),
            r.profile["tables"]["attention_points"][0]["seconds"].get<double>());
  // The fixture's step ran SDPA's flash backend: its attention is priced by the base's
  // FlashAttention-2 table of the model's head width, scaled by the traced time over the base's
  // prediction at the traced shape (forward and backward apart); that scaled table also answers the
  // default key (the job runs that kernel); the other head widths' tables are untouched.
  const auto& at = r.profile["tables"]["attention_points"][0];
  EXPECT_EQ(at["kernel"], "flash2");
  const double f = at["seconds"].get<double>() / at["base_seconds"].get<double>();
  const double bw = at["backward_seconds"].get<double>() / at["base_backward_seconds"].get<double>();
  const hw::Profile base = hw::default_profile("h200-sxm-141gb");
  ASSERT_EQ(p.prefill_flash2.size(), base.prefill_flash2.size());
  int scaled = 0;
  for (std::size_t i = 0; i < p.prefill_flash2.size(); ++i) {
    const bool traced = p.prefill_flash2[i].head_dim == 64;
    scaled += traced ? 1 : 0;
    for (std::size_t c = 0; c < p.prefill_flash2[i].seconds.size(); ++c) {
      if (!std::isfinite(base.prefill_flash2[i].seconds[c])) continue;
      EXPECT_NEAR(p.prefill_flash2[i].seconds[c], base.prefill_flash2[i].seconds[c] * (traced ? f : 1.0),
                  1e-12);
      EXPECT_NEAR(p.prefill_flash2[i].backward_seconds[c],
                  base.prefill_flash2[i].backward_seconds[c] * (traced ? bw : 1.0), 1e-12);
    }
  }
  EXPECT_EQ(scaled, 1);
  for (std::size_t i = 0; i < p.prefill.size(); ++i) {
    const hw::PrefillTable& want =
        p.prefill[i].head_dim == 64 ? *p.prefill_table(64, hw::AttentionKernel::Flash2) : base.prefill[i];
    ASSERT_EQ(p.prefill[i].seconds.size(), want.seconds.size()) << p.prefill[i].head_dim;
    for (std::size_t c = 0; c < want.seconds.size(); ++c) {
      if (std::isfinite(want.seconds[c])) {
        EXPECT_NEAR(p.prefill[i].seconds[c], want.seconds[c], 1e-12);
      }
    }
  }
  EXPECT_EQ(r.optimizer_tensors, 15);  // embedding, 6 per layer, final norm, head
  EXPECT_GT(r.optimizer_params, 1.8e6);
  EXPECT_EQ(r.profile["trace_calibration"]["summary"]["kernels"], 102);
}

TEST(TraceProfile, RefusesTracesWithoutATrainingStep) {
  const std::string text = read_maybe_gzip(kFixture, kMaxTraceBytes);
  Json j = Json::parse(text);
  // No GPU work.
  Json no_kernels = j;
  Json kept = Json::array();
  for (const auto& e : j["traceEvents"])
    if (e.value("cat", "") != "kernel" && e.value("cat", "") != "gpu_memcpy") kept.push_back(e);
  no_kernels["traceEvents"] = kept;
  const std::string p1 = temp_path("no_kernels.json");
  std::ofstream(p1) << no_kernels.dump();
  TraceCalibrationOptions o;
  o.trace_path = p1;
  EXPECT_THROW(calibrate_from_trace(o), Error);
  // Forward only: drop the autograd thread's ops and kernels.
  Json fwd = j;
  kept = Json::array();
  for (const auto& e : j["traceEvents"]) {
    const std::string n = e.value("name", "");
    if (e.contains("tid") && e["tid"].is_number() && e["tid"].get<int>() == 4250) continue;
    kept.push_back(e);
  }
  fwd["traceEvents"] = kept;
  const std::string p2 = temp_path("forward_only.json");
  std::ofstream(p2) << fwd.dump();
  o.trace_path = p2;
  try {
    calibrate_from_trace(o);
    FAIL() << "a forward-only trace was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backward"), std::string::npos) << e.what();
  }
  o.trace_path = kFixture;
  o.framework = "tensorflow";
  EXPECT_THROW(calibrate_from_trace(o), Error);
  std::filesystem::remove(p1);
  std::filesystem::remove(p2);
}

}  // namespace
}  // namespace infraplan::ptrace
