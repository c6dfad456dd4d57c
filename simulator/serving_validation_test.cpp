// Predicted vs measured metric comparison, and the real-time driver path of the serving
// simulation (a backend factory plus a clock), with a fake backend and a fake clock.
#include "simulator/serving_validation.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"
#include "simulator/serving_sim.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

TEST(ServingValidation, ComparesEveryMetricWithSignedErrors) {
  Json pred = {{"ttft_ms", {{"p50", 11.0}, {"p90", 20.0}, {"p99", 30.0}}},
               {"tpot_ms", {{"p50", 9.0}, {"p90", 10.0}, {"p99", 12.0}}},
               {"itl_ms", {{"p50", 9.0}, {"p90", 10.0}, {"p99", 12.0}}},
               {"e2e_ms", {{"p50", 100.0}, {"p90", 200.0}, {"p99", 300.0}}},
               {"throughput_rps", 2.0},
               {"output_tokens_per_s", 500.0},
               {"goodput_rps", 0.0}};
  Json meas = pred;
  meas["ttft_ms"]["p50"] = 10.0;
  meas["output_tokens_per_s"] = 400.0;
  const auto c = compare_serving_metrics(pred, meas);
  ASSERT_EQ(c.size(), validated_metrics().size());
  EXPECT_EQ(c[0].metric, "ttft_ms.p50");
  EXPECT_NEAR(c[0].error, 0.10, 1e-12);
  for (const auto& x : c) {
    if (x.metric == "output_tokens_per_s") {
      EXPECT_NEAR(x.error, 0.25, 1e-12);
    }
    if (x.metric == "goodput_rps") {
      EXPECT_EQ(x.error, 0.0);  // both zero
    }
    if (x.metric == "tpot_ms.p50") {
      EXPECT_EQ(x.error, 0.0);
    }
  }
  meas["goodput_rps"] = 0.0;
  pred["goodput_rps"] = 1.0;
  const auto inf = compare_serving_metrics(pred, meas);
  EXPECT_TRUE(std::isinf(inf.back().error));
  EXPECT_TRUE(comparisons_to_json(inf)["goodput_rps"]["error"].is_null());
  Json missing = meas;
  missing.erase("itl_ms");
  try {
    compare_serving_metrics(pred, missing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("itl_ms.p50"), std::string::npos) << e.what();
  }
}

namespace {
/// Steps take a fixed time on a fake clock that the backend advances while it "runs".
class FakeClock final : public RunClock {
 public:
  double now_s() const override { return t; }
  void wait_until(double x) override {
    if (x > t) t = x;
  }
  double t = 0;
};
struct Counts {
  int steps = 0, forgotten = 0;
};
class FixedBackend final : public ExecutionBackend {
 public:
  FixedBackend(FakeClock* c, double d, Counts* n) : clock(c), dur(d), counts(n) {}
  StepCost step(const BatchShape& b) override {
    for (const auto& it : b.items) EXPECT_NE(it.seq, nullptr);
    ++counts->steps;
    StepCost s;
    s.total_s = dur;
    if (clock) clock->t += dur;
    return s;
  }
  void forget(std::int64_t) override { ++counts->forgotten; }
  FakeClock* clock;
  double dur;
  Counts* counts;  // outlives the engine that owns this backend
};

ServingSetup setup() {
  ServingSetup s;
  s.name = "rt";
  s.model = model::preset("llama2-7b");
  s.cluster = hw::cluster_preset("dgx-h200", 1);
  s.serving.max_num_seqs = 8;
  s.serving.max_batched_tokens = 256;
  WorkloadClass w;
  w.requests = 20;
  w.arrival.rate_per_s = 50;
  w.prompt.mean = 100;
  w.output.mean = 20;
  s.workload.classes = {w};
  s.workload.seed = 3;
  return s;
}
}  // namespace

TEST(ServingRealTime, ClockDrivenRunEqualsSimulationWithTheSameStepTimes) {
  const ServingSetup s = setup();
  hw::RooflineCostModel cm(s.cluster.gpu);
  // Simulated time with a constant-time backend...
  Counts sim_counts, rt_counts;
  SimOptions a;
  a.backend_factory = [&](InstanceSpec&, const strat::ServingConfig&) {
    return std::unique_ptr<ExecutionBackend>(std::make_unique<FixedBackend>(nullptr, 0.01, &sim_counts));
  };
  const auto ra = simulate_serving(s, cm, a);
  // ... and "real" time where the step advances the clock by the same amount.
  FakeClock clock;
  SimOptions b;
  b.clock = &clock;
  b.backend_factory = [&](InstanceSpec& spec, const strat::ServingConfig&) {
    spec.num_blocks = std::min<std::int32_t>(spec.num_blocks, 4096);  // a backend may lower the capacity
    return std::unique_ptr<ExecutionBackend>(std::make_unique<FixedBackend>(&clock, 0.01, &rt_counts));
  };
  const auto rb = simulate_serving(s, cm, b);
  EXPECT_GT(sim_counts.steps, 20);
  EXPECT_EQ(sim_counts.steps, rt_counts.steps);
  EXPECT_EQ(rt_counts.forgotten, 20);
  EXPECT_EQ(rb.instances[0].kv_capacity_tokens, 4096 * 16);
  EXPECT_NEAR(ra.metrics.ttft_ms.p50, rb.metrics.ttft_ms.p50, 1e-6);
  EXPECT_NEAR(ra.metrics.tpot_ms.p90, rb.metrics.tpot_ms.p90, 1e-6);
  EXPECT_NEAR(ra.metrics.duration_s, rb.metrics.duration_s, 1e-9);
  EXPECT_NEAR(clock.t, rb.metrics.duration_s + rb.requests.front().arrival_s, 0.02);
}
