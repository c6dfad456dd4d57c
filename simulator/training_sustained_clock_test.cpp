#include <gtest/gtest.h>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/clocked_cost_model.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "hardware/spread_cost_model.hpp"
#include "simulator/prediction_range.hpp"
#include "simulator/training_sim.hpp"

namespace infraplan::sim::train {
namespace {

struct H200 {
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  std::unique_ptr<hw::CalibratedCostModel> cost = hw::make_calibrated_cost_model("h200-sxm-141gb");
  coll::CommModel comm{c};
  H200() { c.gpus_per_node = 1; }
  strat::TrainingConfig step(const model::ModelSpec& m, std::int64_t micro_batch, std::int64_t seq) {
    strat::TrainingConfig t;
    t.seq_len = seq, t.micro_batch = micro_batch, t.global_batch = micro_batch;
    t.precision = strat::Precision::BF16Pure;
    t.recompute = model::Recompute::Full;
    strat::resolve_training(t, m, c);
    return t;
  }
};

// A heavy step is priced below the tables' clock (capped), a light one at the top clock; off by
// default. The event simulation walks the step through the board's limiter (the profile has its
// time constant): it sees the busy stretches at the cap that the closed form's average over the
// whole step (idle gaps included) dilutes, so its clock is at most the closed form's, and close.
TEST(SustainedClock, HeavyStepsCappedLightStepsAtTheTopClock) {
  H200 h;
  const auto big = model::preset("llama3-8b");
  const auto t = h.step(big, 2, 4096);
  TrainingOptions o;
  EXPECT_FALSE(simulate_training(big, h.c, t, *h.cost, h.comm, o).clock.has_value());
  o.sustained_clock = true;
  const TrainingResult r = simulate_training(big, h.c, t, *h.cost, h.comm, o);
  ASSERT_TRUE(r.clock.has_value());
  EXPECT_TRUE(r.clock->capped());
  EXPECT_LT(r.clock->mhz, r.clock->reference_mhz);
  EXPECT_GT(r.clock->time_constant_s, 0.0);
  EXPECT_NEAR(r.clock->power_w, r.clock->limit_w, 10.0);
  // The law prices the step's matmul work with a framework's normal operands (power.normal_operands),
  // and the JSON says so.
  EXPECT_NEAR(r.clock->operand_energy_factor, h.cost->power_model()->normal_operand_factor(), 1e-12);
  EXPECT_GT(r.clock->operand_energy_factor, 1.0);
  const Json cj = r.clock->to_json();
  EXPECT_DOUBLE_EQ(cj.at("operand_energy_factor").get<double>(), r.clock->operand_energy_factor);
  EXPECT_NE(cj.at("source").get<std::string>().find("normal operands"), std::string::npos);
  // Slower GEMMs: the step takes longer than at the tables' clock.
  EXPECT_GT(r.iteration_time_s, simulate_training(big, h.c, t, *h.cost, h.comm).iteration_time_s);
  const TrainingEstimate e = estimate_training(big, h.c, t, *h.cost, h.comm, nullptr, true);
  ASSERT_TRUE(e.clock.has_value());
  EXPECT_EQ(e.clock->time_constant_s, 0.0);
  EXPECT_DOUBLE_EQ(e.clock->operand_energy_factor, r.clock->operand_energy_factor);
  EXPECT_LE(r.clock->mhz, e.clock->mhz + 1.0);
  EXPECT_NEAR(e.clock->mhz / r.clock->mhz, 1.0, 0.10);
  // Deterministic.
  EXPECT_EQ(simulate_training(big, h.c, t, *h.cost, h.comm, o).iteration_time_s, r.iteration_time_s);
  // The estimate's uncertainty range is taken at the same clock, so it brackets the estimate.
  const hw::SpreadBands bands = hw::spread_bands(*h.cost->measured_profile());
  ASSERT_TRUE(bands.known());
  const auto range = estimate_time_range(big, h.c, t, *h.cost, h.comm, bands, true);
  ASSERT_TRUE(range.has_value());
  EXPECT_LT((*range)[0], e.iteration_time_s);
  EXPECT_GT((*range)[1], e.iteration_time_s);

  model::ModelSpec small = model::preset("llama2-7b");
  small.hidden = 512, small.heads = 8, small.kv_heads = 8, small.head_dim = 64, small.ffn_hidden = 1408;
  small.layers = 4, small.vocab = 4096;
  const auto ts = h.step(small, 1, 512);
  const TrainingResult rs = simulate_training(small, h.c, ts, *h.cost, h.comm, o);
  ASSERT_TRUE(rs.clock.has_value());
  EXPECT_FALSE(rs.clock->capped());
  EXPECT_DOUBLE_EQ(rs.clock->mhz, rs.clock->max_mhz);
  const TrainingEstimate es = estimate_training(small, h.c, ts, *h.cost, h.comm, nullptr, true);
  const auto rs_range = estimate_time_range(small, h.c, ts, *h.cost, h.comm, bands, true);
  ASSERT_TRUE(rs_range.has_value());
  EXPECT_LT((*rs_range)[0], es.iteration_time_s);
  EXPECT_GT((*rs_range)[1], es.iteration_time_s);
}

// At the clock the limiter gives a capped eager step, its eager kernels (RoPE, casts, norms, the
// fused AdamW step) slow by their measured clock shares as well as its GEMMs by the clock exponent:
// the same step priced at that clock with the eager kernels held at their tabled times is faster,
// by less than the eager kernels' share of the step.
TEST(SustainedClock, EagerKernelsOfACappedStepSlowByTheirClockShare) {
  H200 h;
  const auto big = model::preset("llama3-8b");
  auto t = h.step(big, 2, 4096);
  t.framework = strat::Framework::PytorchEager;
  strat::resolve_training(t, big, h.c);
  TrainingOptions o;
  o.sustained_clock = true;
  const TrainingResult r = simulate_training(big, h.c, t, *h.cost, h.comm, o);
  ASSERT_TRUE(r.clock.has_value() && r.clock->capped());
  const hw::ClockedCostModel with(*h.cost, r.clock->mhz), without(*h.cost, r.clock->mhz, false);
  const double t_with = simulate_training(big, h.c, t, with, h.comm).iteration_time_s;
  const double t_without = simulate_training(big, h.c, t, without, h.comm).iteration_time_s;
  EXPECT_DOUBLE_EQ(t_with, r.iteration_time_s);
  EXPECT_GT(t_with, t_without * 1.01);
  EXPECT_LT(t_with, t_without * 1.15);
}

TEST(SustainedClock, NoPowerSectionNoClock) {
  H200 h;
  const hw::RooflineCostModel roof(h.c.gpu);
  const auto m = model::preset("llama3-8b");
  const auto t = h.step(m, 1, 2048);
  TrainingOptions o;
  o.sustained_clock = true;
  EXPECT_FALSE(simulate_training(m, h.c, t, roof, h.comm, o).clock.has_value());
  EXPECT_FALSE(estimate_training(m, h.c, t, roof, h.comm, nullptr, true).clock.has_value());
}

}  // namespace
}  // namespace infraplan::sim::train
