// The roadmap's serving checks, reproduced from the scenario files under scenarios/serve_*.json.
// Time comes from the datasheet roofline so that the outcomes do not move with profile updates.
#include <gtest/gtest.h>

#include <algorithm>

#include "hardware/roofline_cost_model.hpp"
#include "simulator/serving_sim.hpp"
#include "strategies/scenario.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {

ServingSetup load(const std::string& name) {
  return serving_setup_from_scenario(
      strat::load_scenario(std::string(INFRAPLAN_SOURCE_DIR) + "/scenarios/" + name));
}

ServingResult run(const ServingSetup& s) {
  hw::RooflineCostModel cm(s.cluster.gpu);
  SimOptions o;
  o.keep_requests = false;
  return simulate_serving(s, cm, o);
}

double class_tpot_p95(const ServingResult& r, const std::string& klass) {
  for (std::size_t i = 0; i < r.metrics.class_names.size(); ++i)
    if (r.metrics.class_names[i] == klass) return r.metrics.per_class[i].tpot_ms.p95;
  return r.metrics.tpot_ms.p95;  // single-class run
}

}  // namespace

// 3.5: a few very long prefills among many short decodes raise decode P95 TPOT 3-5x in
// aggregated serving; disaggregation on the same GPUs removes most of it.
TEST(ServingScenarios, LongPrefillsInflateDecodeTpotAndDisaggregationRemovesIt) {
  auto agg = load("serve_pd_interference.json");
  auto quiet = agg;
  quiet.workload.classes.resize(1);  // the short requests alone
  const double base = run(quiet).metrics.tpot_ms.p95;
  const double mixed = class_tpot_p95(run(agg), "short");
  const auto pd_setup = load("serve_pd_disaggregated.json");
  ASSERT_TRUE(pd_setup.engine.pd.enabled);
  auto pd = run(pd_setup);
  const double split = class_tpot_p95(pd, "short");
  EXPECT_GE(mixed / base, 3.0) << "base " << base << " ms, mixed " << mixed << " ms";
  EXPECT_LE(mixed / base, 5.5);
  EXPECT_LE(split / base, 1.3) << "disaggregated " << split << " ms";
  EXPECT_GT(pd.kv_transfers, 600);
}

// 3.2: chunked prefill bounds the decode stall a long prompt causes.
TEST(ServingScenarios, ChunkedPrefillBoundsTpotSpikes) {
  auto whole = run(load("serve_pd_interference.json"));
  auto chunked = run(load("serve_chunked_prefill.json"));
  EXPECT_GT(whole.metrics.itl_ms.max, 1000.0) << "a 32k-token prefill stalls decodes for seconds";
  EXPECT_LT(chunked.metrics.itl_ms.max, 60.0) << "one 1024-token step at most";
  EXPECT_LT(class_tpot_p95(chunked, "short"), 0.6 * class_tpot_p95(whole, "short"));
}

// 3.2: continuous batching against static batching on the same replica and workload.
TEST(ServingScenarios, ContinuousBatchingBeatsStaticBatching) {
  auto st_setup = load("serve_continuous_vs_static.json");
  ASSERT_EQ(st_setup.engine.sched.batching, Batching::Static);
  auto cont_setup = st_setup;
  cont_setup.engine.sched.batching = Batching::Continuous;
  auto st = run(st_setup), cont = run(cont_setup);
  EXPECT_GT(cont.metrics.output_tokens_per_s, 1.8 * st.metrics.output_tokens_per_s);
  EXPECT_LT(st.metrics.useful_compute_fraction, 0.6) << "finished members keep being computed as padding";
  EXPECT_EQ(cont.metrics.useful_compute_fraction, 1.0);
  EXPECT_GT(cont.metrics.mean_batch_tokens, st.metrics.mean_batch_tokens);
  EXPECT_LT(cont.metrics.ttft_ms.p50, 0.5 * st.metrics.ttft_ms.p50);
}

// 3.2: a shared system prompt is computed once with the prefix cache.
TEST(ServingScenarios, PrefixCacheCutsTtft) {
  auto on = load("serve_prefix_cache.json");
  auto off = on;
  off.engine.prefix_cache = false;
  auto a = run(on), b = run(off);
  EXPECT_GT(a.metrics.prefix_hit_rate, 0.8);
  EXPECT_EQ(b.metrics.prefix_hit_rate, 0.0);
  EXPECT_LT(a.metrics.ttft_ms.mean, 0.5 * b.metrics.ttft_ms.mean);
  EXPECT_LT(a.metrics.ttft_ms.p95, 0.5 * b.metrics.ttft_ms.p95);
}

// 3.5: past the knee, raw throughput keeps rising while goodput falls.
TEST(ServingScenarios, GoodputDivergesFromThroughputUnderTightSlos) {
  auto high = load("serve_goodput_slo.json");
  auto low = high;
  low.workload.classes[0].arrival.rate_per_s = 6;
  auto h = run(high), l = run(low);
  EXPECT_GE(h.metrics.throughput_rps, l.metrics.throughput_rps);
  EXPECT_LT(h.metrics.goodput_rps, 0.5 * l.metrics.goodput_rps);
  EXPECT_LT(h.metrics.goodput_rps, 0.3 * h.metrics.throughput_rps);
  EXPECT_GT(l.metrics.slo_attainment, 0.8);
}

// 3.4: speculative decoding pays off for code (high α) and not for high-temperature chat
// (α < 0.5) or at a large batch where the draft and the k + 1 verify tokens compete for compute.
TEST(ServingScenarios, SpeculativeDecodingGainsAndNoGainCases) {
  auto spec = load("serve_spec_decode.json");
  ASSERT_TRUE(spec.engine.spec.enabled());
  auto plain = spec;
  plain.engine.spec.method = SpecMethod::None;
  auto s = run(spec), p = run(plain);
  EXPECT_LT(class_tpot_p95(s, "code"), 0.75 * class_tpot_p95(p, "code"));
  EXPECT_GT(class_tpot_p95(s, "chat"), 0.95 * class_tpot_p95(p, "chat")) << "α = 0.35: no gain";
  // Large batch: many concurrent code requests.
  auto big = spec, big_plain = plain;
  for (auto* b : {&big, &big_plain}) {
    b->serving.max_num_seqs = 256;
    b->workload.classes.resize(1);
    b->workload.classes[0].requests = 600;
    b->workload.classes[0].arrival.rate_per_s = 200;
  }
  auto bs = run(big), bp = run(big_plain);
  EXPECT_LT(bs.metrics.output_tokens_per_s, 1.05 * bp.metrics.output_tokens_per_s)
      << "at a large batch the draft's work cancels the gain";
}

// 3.3: W4A16 beats W8A8 for small-batch decode and loses at a large batch.
TEST(ServingScenarios, W4A16VersusW8A8DependsOnBatch) {
  auto int4 = load("serve_quantization.json");
  ASSERT_EQ(int4.serving.weights, strat::WeightQuant::INT4);
  auto int8 = int4;
  int8.serving.weights = strat::WeightQuant::INT8;
  EXPECT_LT(run(int4).metrics.tpot_ms.p50, 0.8 * run(int8).metrics.tpot_ms.p50);
  for (auto* s : {&int4, &int8}) {
    s->serving.max_num_seqs = 256;
    s->workload.classes[0].requests = 1500;
    s->workload.classes[0].arrival.rate_per_s = 1000;  // saturating: big batches
  }
  auto a = run(int4), b = run(int8);
  EXPECT_GT(b.metrics.output_tokens_per_s, 1.1 * a.metrics.output_tokens_per_s);
}

// 3.7: prefix-aware routing keeps each system prompt on few replicas.
TEST(ServingScenarios, PrefixAwareRoutingRaisesHitRate) {
  auto aware = load("serve_routing_prefix_aware.json");
  auto rr = aware;
  rr.engine.routing = Routing::RoundRobin;
  auto a = run(aware), b = run(rr);
  EXPECT_GT(a.metrics.prefix_hit_rate, b.metrics.prefix_hit_rate + 0.05);
  EXPECT_LT(a.metrics.ttft_ms.mean, b.metrics.ttft_ms.mean);
}

TEST(ServingScenarios, TraceReplay) {
  auto r = run(load("serve_trace_replay.json"));
  EXPECT_EQ(r.metrics.requests, 7);
  EXPECT_GT(r.metrics.prefix_hit_rate, 0.1);
}

// 3.5: sizing the prefill and decode pools for prompts of ~2,000 and outputs of ~500 tokens on
// 8 GPUs: too few prefill instances and TTFT explodes, too few decode instances and TPOT does.
TEST(ServingScenarios, PrefillDecodeRatioHasAnInteriorOptimum) {
  const auto base = load("serve_pd_ratio.json");
  std::vector<double> goodput;
  for (int p = 1; p <= 7; ++p) {
    auto s = base;
    s.engine.pd.prefill_instances = p;
    s.engine.pd.decode_instances = 8 - p;
    goodput.push_back(run(s).metrics.goodput_rps);
  }
  const auto best = std::max_element(goodput.begin(), goodput.end()) - goodput.begin() + 1;
  EXPECT_GE(best, 2);
  EXPECT_LE(best, 4);
  EXPECT_LT(goodput.front(), 0.2 * goodput[std::size_t(best - 1)]);
  EXPECT_LT(goodput.back(), 0.2 * goodput[std::size_t(best - 1)]);
}
