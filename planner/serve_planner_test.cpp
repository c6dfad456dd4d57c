#include "planner/serve_planner.hpp"

#include <gtest/gtest.h>

#include "hardware/calibrated_cost_model.hpp"
#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::plan;
namespace sv = infraplan::sim::serve;

namespace {

ServeSearch search(const std::string& model, const std::string& gpu, double isl, double osl, double ttft_ms,
                   double tpot_ms) {
  ServeSearch s;
  s.model = model::preset(model);
  s.gpu = hw::find_gpu(gpu);
  s.workload = sv::workload_from_json(
      Json{{"requests", 100},
           {"prompt_tokens", {{"dist", "lognormal"}, {"mean", isl}, {"sigma", 0.3}, {"max", 3 * isl}}},
           {"output_tokens", {{"dist", "lognormal"}, {"mean", osl}, {"sigma", 0.3}, {"max", 3 * osl}}}},
      7);
  s.workload.slo = {ttft_ms, tpot_ms};
  s.probe_requests = 60;
  return s;
}

const ServeCandidate* find(const ServePlan& p, const std::string& mode, strat::WeightQuant q, int tp) {
  for (const auto& c : p.candidates)
    if (c.mode == mode && c.weights == q && (mode == "aggregated" ? c.tp == tp : c.decode_tp == tp))
      return &c;
  return nullptr;
}

}  // namespace

// Roadmap 3.3: 70B on 2×A100-80GB. fp16 leaves little KV room, W8A8 with TP=2 serves far more,
// INT4 fits one card, fp8 is not offered on A100.
TEST(ServePlanner, SeventyBOnTwoA100s) {
  auto s = search("llama2-70b", "a100-sxm4-80gb", 1000, 200, 3000, 100);
  s.gpus = 2;
  s.tps = {1, 2};
  s.disaggregation = false;
  s.quants = {strat::WeightQuant::FP16, strat::WeightQuant::INT8, strat::WeightQuant::INT4};
  auto cost = hw::make_calibrated_cost_model("a100-sxm4-80gb");
  auto plan = plan_serving(s, *cost);
  const auto* fp16 = find(plan, "aggregated", strat::WeightQuant::FP16, 2);
  const auto* int8 = find(plan, "aggregated", strat::WeightQuant::INT8, 2);
  const auto* int4 = find(plan, "aggregated", strat::WeightQuant::INT4, 1);
  ASSERT_NE(int8, nullptr);
  ASSERT_NE(int4, nullptr);                                                   // INT4 fits one card
  EXPECT_EQ(find(plan, "aggregated", strat::WeightQuant::FP16, 1), nullptr);  // fp16 does not fit one card
  if (fp16) {
    EXPECT_GT(int8->kv_capacity_tokens, 4 * fp16->kv_capacity_tokens);
    EXPECT_GT(int8->goodput_rps, 1.5 * fp16->goodput_rps);
  }
  EXPECT_NE(plan.candidates.front().weights, strat::WeightQuant::FP16);
  strat::ServingConfig fp8;
  fp8.weights = strat::WeightQuant::FP8;
  EXPECT_THROW(strat::validate_serving(fp8, s.model, s.gpu), Error);
}

// Roadmap 3.7: 70B dense on one 8×H100 node, TP=8 vs TP=4 × DP=2.
TEST(ServePlanner, SeventyBTp8VersusTp4TimesTwo) {
  auto s = search("llama3-70b", "h100-sxm5-80gb", 1000, 200, 3000, 100);
  s.gpus = 8;
  s.tps = {4, 8};
  s.disaggregation = false;
  auto cost = hw::make_calibrated_cost_model("h100-sxm5-80gb");
  auto plan = plan_serving(s, *cost);
  const auto* t8 = find(plan, "aggregated", strat::WeightQuant::BF16, 8);
  const auto* t4 = find(plan, "aggregated", strat::WeightQuant::BF16, 4);
  ASSERT_NE(t8, nullptr);
  ASSERT_NE(t4, nullptr);
  EXPECT_EQ(t8->replicas, 1);
  EXPECT_EQ(t4->replicas, 2);
  // One copy of the weights leaves more KV for the whole node.
  EXPECT_GT(t8->kv_capacity_tokens, 2 * t4->kv_capacity_tokens);
  // At the same light load each request runs faster on TP=8 (twice the memory bandwidth).
  auto tpot_at = [&](int tp, int replicas) {
    sv::ServingSetup st;
    st.model = s.model;
    st.cluster = cluster_for(s.gpu, 8);
    st.serving.tp = tp;
    st.serving.replicas = replicas;
    st.engine.routing = sv::Routing::LeastOutstanding;
    st.workload = s.workload;
    st.workload.classes.at(0).requests = 40;
    st.workload.classes.at(0).arrival.rate_per_s = 0.5;
    sv::SimOptions o;
    o.keep_requests = false;
    return sv::simulate_serving(st, *cost, o).metrics.tpot_ms.p50;
  };
  EXPECT_LT(tpot_at(8, 1), 0.8 * tpot_at(4, 2));
  EXPECT_GT(t8->goodput_rps, 0);
  EXPECT_GT(t4->goodput_rps, 0);
}

// Roadmap 3.5: the prefill:decode ratio comes out of the simulation, and a tighter TPOT makes
// decode GPUs dearer.
TEST(ServePlanner, PrefillDecodeRatioFollowsTheTpotSlo) {
  auto ratio = [](double tpot_ms) {
    auto s = search("llama3-8b", "h100-sxm5-80gb", 2000, 500, 2000, tpot_ms);
    s.target_rate = 4;
    s.tps = {1};
    auto cost = hw::make_calibrated_cost_model("h100-sxm5-80gb");
    auto plan = plan_serving(s, *cost);
    for (const auto& c : plan.candidates)
      if (c.mode == "disaggregated") {
        EXPECT_GT(c.prefill_gpus, 0);
        EXPECT_GT(c.decode_gpus, 0);
        return (c.decode_tp / c.decode_capacity_rps) / (c.prefill_tp / c.capacity_rps);
      }
    ADD_FAILURE() << "no disaggregated candidate";
    return 0.0;
  };
  double loose = ratio(60), tight = ratio(15);
  EXPECT_GT(tight, 1.3 * loose);
  EXPECT_GT(loose, 0.3);
}

TEST(ServePlanner, BadRequestsAreRefused) {
  auto s = search("llama3-8b", "h100-sxm5-80gb", 500, 100, 1000, 50);
  auto cost = hw::make_calibrated_cost_model("h100-sxm5-80gb");
  EXPECT_THROW(plan_serving(s, *cost), Error);  // neither rate nor GPUs
  s.gpus = 4;
  s.target_rate = 3;
  EXPECT_THROW(plan_serving(s, *cost), Error);  // both
  s.target_rate = 0;
  s.workload.slo.tpot_ms = 0;
  EXPECT_THROW(plan_serving(s, *cost), Error);
}
