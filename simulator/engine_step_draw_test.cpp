// The draw of held engine decode steps against the power law (simulator/engine_step_draw.hpp):
// κ per held step of the H200 profile, the clock the law gives each step's work with and without
// it, and the held-out steps (LLaMA-2-13B, the Phi-3-medium and CodeLlama-34B shapes) priced with
// the κ of the LLaMA-2-7B / LLaMA-3-8B fit steps only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/profile.hpp"
#include "simulator/engine_step_draw.hpp"
#include "simulator/execution_backend.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {

const hw::CalibratedCostModel& h200() {
  static const auto cm = hw::make_calibrated_cost_model("h200-sxm-141gb");
  return *cm;
}

struct Row {
  EngineStepDraw d;
  double predicted_mhz = 0;  // the law's clock for the step's work × κ(batch) of the fit steps
};

std::vector<Row> rows() {
  const std::vector<EngineStepDraw> draws = engine_step_draws(h200());
  const DecodeDrawScale scale(draws);
  const hw::PowerModel& law = *h200().power_model();
  std::vector<Row> out;
  for (const EngineStepDraw& d : draws)
    out.push_back({d, law.sustained_clock_mhz(with_draw_scale(d.demand, scale.at(double(d.batch))))});
  return out;
}

}  // namespace

TEST(EngineStepDraw, HeldDecodeStepsAgainstThePowerLaw) {
  const auto rs = rows();
  ASSERT_GE(rs.size(), 8u) << "the H200 profile's power.engine_steps";
  std::printf("%-20s %5s %6s %-8s %9s %8s %7s %6s %9s %7s\n", "model", "batch", "ctx", "role", "measured",
              "law", "error", "kappa", "with k(b)", "error");
  double fit_max = 0, hold_max = 0, law_hold_max = 0;
  for (const Row& r : rs) {
    const double e_law = r.d.law_mhz / r.d.measured_mhz - 1;
    const double e = r.predicted_mhz / r.d.measured_mhz - 1;
    std::printf("%-20s %5lld %6lld %-8s %5.0f MHz %8.0f %+6.1f%% %6.3f %9.0f %+6.1f%%\n", r.d.model.c_str(),
                (long long)r.d.batch, (long long)r.d.context, r.d.role.c_str(), r.d.measured_mhz, r.d.law_mhz,
                100 * e_law, r.d.scale, r.predicted_mhz, 100 * e);
    EXPECT_TRUE(std::isfinite(r.d.scale) && r.d.scale > 0.25 && r.d.scale < 4) << r.d.model;
    (r.d.role == "fit" ? fit_max : hold_max) = std::max(r.d.role == "fit" ? fit_max : hold_max, std::abs(e));
    if (r.d.role != "fit") law_hold_max = std::max(law_hold_max, std::abs(e_law));
  }
  std::printf("clock error, max |error|: fit %.1f%%, held out %.1f%% (the law alone on the held-out steps: %.1f%%)\n",
              100 * fit_max, 100 * hold_max, 100 * law_hold_max);
}

TEST(EngineStepDraw, HeldStepTimesAgainstTheSimulatedSteps) {
  // Each held step simulated back to back under the limiter with the fit steps' draw (no host
  // time): its GPU time and clock against what the held step measured.
  const hw::Profile& prof = *h200().measured_profile();
  BackendOptions o = BackendOptions::without_host();
  o.engine = engine_preset("infraplan", 256);  // the engine that was held
  o.engine.host_step_us = o.engine.host_seq_us = 0;
  o.power_limited = true;
  o.decode_draw = std::make_shared<const DecodeDrawScale>(engine_step_draws(h200()));
  std::printf("%-20s %5s %6s %-8s %10s %10s %7s %9s %9s\n", "model", "batch", "ctx", "role", "held GPU",
              "simulated", "error", "held MHz", "simulated");
  double worst_fit = 0;
  for (std::size_t i = 0; i < prof.power->engine_steps.size(); ++i) {
    const hw::Profile::EngineStepPoint& p = prof.power->engine_steps[i];
    const model::ModelSpec m = model::resolve_model(p.model, "model");
    SimulatedBackend be(m, strat::ServingConfig{}, h200(), nullptr, o);
    BatchShape b;
    for (std::int64_t s = 0; s < p.batch; ++s) b.items.push_back({1, p.context, false, true});
    StepCost c;
    for (int r = 0; r < 300; ++r) c = be.step(b);
    const double gpu = c.total_s - c.host_s, e = gpu / p.gpu_seconds - 1;
    std::printf("%-20s %5lld %6lld %-8s %7.3f ms %7.3f ms %+6.1f%% %9.0f %9.0f\n",
                (p.name.empty() ? m.name : p.name).c_str(), (long long)p.batch, (long long)p.context, p.role.c_str(),
                p.gpu_seconds * 1e3, gpu * 1e3, 100 * e, p.clock_mhz, c.clock_mhz);
    EXPECT_GT(gpu, 0);
    if (p.role == "fit") worst_fit = std::max(worst_fit, std::abs(e));
  }
  std::printf("fit steps: max |error| of the held GPU time %.1f%%\n", 100 * worst_fit);
}

TEST(EngineStepDraw, ScaleIsInterpolatedInLogBatchAndHeldFlatBeyondTheEnds) {
  std::vector<EngineStepDraw> d(3);
  d[0].batch = 16, d[0].scale = 1.0, d[0].role = "fit";
  d[1].batch = 256, d[1].scale = 1.4, d[1].role = "fit";
  d[2].batch = 64, d[2].scale = 9.0, d[2].role = "holdout";  // held out: not used
  const DecodeDrawScale s(d);
  EXPECT_DOUBLE_EQ(s.at(1), 1.0);
  EXPECT_DOUBLE_EQ(s.at(16), 1.0);
  EXPECT_NEAR(s.at(64), 1.2, 1e-12);  // halfway in log(batch)
  EXPECT_DOUBLE_EQ(s.at(1024), 1.4);
  EXPECT_DOUBLE_EQ(DecodeDrawScale().at(64), 1.0);
}

TEST(EngineStepDraw, HeavyDecodeStepsRunSlowerWithTheMeasuredDraw) {
  // LLaMA-3-8B, 256 sequences of 256 tokens back to back: with the held steps' draw the limiter
  // settles below the law's clock and the step takes longer.
  strat::ServingConfig s;
  BackendOptions law = BackendOptions::without_host(), held = law;
  law.power_limited = held.power_limited = true;
  held.decode_draw = std::make_shared<const DecodeDrawScale>(engine_step_draws(h200()));
  ASSERT_FALSE(held.decode_draw->empty());
  SimulatedBackend a(model::preset("llama3-8b"), s, h200(), nullptr, law);
  SimulatedBackend b(model::preset("llama3-8b"), s, h200(), nullptr, held);
  BatchShape st;
  for (int i = 0; i < 256; ++i) st.items.push_back({1, 256, false, true});
  StepCost ca, cb;
  for (int i = 0; i < 200; ++i) ca = a.step(st), cb = b.step(st);
  EXPECT_LT(cb.clock_mhz, ca.clock_mhz - 50);
  EXPECT_GT(cb.total_s, ca.total_s);
  // A prefill-only step keeps the law's draw.
  BatchShape pf;
  pf.items.push_back({4096, 4096, true, true});
  SimulatedBackend a2(model::preset("llama3-8b"), s, h200(), nullptr, law);
  SimulatedBackend b2(model::preset("llama3-8b"), s, h200(), nullptr, held);
  for (int i = 0; i < 20; ++i) ca = a2.step(pf), cb = b2.step(pf);
  EXPECT_DOUBLE_EQ(ca.clock_mhz, cb.clock_mhz);
}

TEST(EngineStepDraw, AProfilePointNamingNoPresetIsRefused) {
  Json j = Json::parse(hw::default_profile_json("h200-sxm-141gb"));
  j["power"]["engine_steps"][0]["model"] = "no-such-model";
  const hw::CalibratedCostModel cm(hw::parse_profile(j, "p.json"), hw::find_gpu("h200-sxm-141gb"));
  try {
    engine_step_draws(cm);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("power.engine_steps[0].model"), std::string::npos) << e.what();
  }
  j["power"]["engine_steps"][0]["held"]["power_w"] = 5000;
  EXPECT_THROW(hw::parse_profile(j, "p.json"), Error);
  j["power"]["engine_steps"][0]["held"]["power_w"] = 600;
  j["power"]["engine_steps"][0]["batch"] = 70000;  // beyond the documented 65,536
  try {
    hw::parse_profile(j, "p.json");
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("power.engine_steps[0].batch"), std::string::npos) << e.what();
  }
}
