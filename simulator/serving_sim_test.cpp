#include "simulator/serving_sim.hpp"

#include <chrono>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/json_text.hpp"
#include "hardware/roofline_cost_model.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {
ServingSetup small_setup(int requests, double rate, std::uint64_t seed = 1) {
  ServingSetup s;
  s.name = "test";
  s.model = model::preset("llama3-8b");
  s.cluster = hw::cluster_preset("dgx-h100");
  s.serving.replicas = 2;
  s.serving.max_num_seqs = 64;
  s.serving.max_batched_tokens = 2048;
  s.engine = engine_options_from_json(Json::object(), s.serving);
  s.workload = workload_from_json(
      {{"requests", requests},
       {"arrival", {{"type", "poisson"}, {"rate_per_s", rate}}},
       {"prompt_tokens", {{"dist", "lognormal"}, {"mean", 800}, {"sigma", 0.7}, {"max", 8000}}},
       {"output_tokens", {{"dist", "lognormal"}, {"mean", 150}, {"sigma", 0.7}, {"max", 1000}}},
       {"prefix", {{"groups", 4}, {"shared_tokens", 256}}}},
      seed);
  return s;
}
}  // namespace

TEST(ServingSim, EveryRequestFinishesOnceWithItsTokensAndNoBlockLeaks) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  for (const char* pre : {"recompute", "swap"}) {
    auto s = small_setup(400, 100);
    s.serving.gpu_memory_utilization = 0.23;  // tight KV: forces preemption
    s.engine = engine_options_from_json({{"preemption", pre}}, s.serving);
    SimOptions o;
    o.check_invariants_every = 7;
    auto r = simulate_serving(s, cm, o);  // throws on a double finish, wrong token count or invariant break
    ASSERT_EQ(r.requests.size(), 400u);
    for (const auto& rec : r.requests) {
      EXPECT_GE(rec.first_token_s, rec.arrival_s);
      EXPECT_GE(rec.finish_s, rec.first_token_s);
    }
    EXPECT_GT(r.metrics.preemptions, 0) << pre;
  }
}

TEST(ServingSim, SameSeedSameBytes) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto a = simulate_serving(small_setup(300, 20, 5), cm);
  auto b = simulate_serving(small_setup(300, 20, 5), cm);
  auto c = simulate_serving(small_setup(300, 20, 6), cm);
  EXPECT_EQ(a.to_json().dump(), b.to_json().dump());
  EXPECT_EQ(requests_csv(a.requests), requests_csv(b.requests));
  EXPECT_NE(a.to_json().dump(), c.to_json().dump());
}

TEST(ServingSim, StableJsonKeys) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto j = simulate_serving(small_setup(50, 10), cm).to_json();
  for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms"})
    for (const char* p : {"p50", "p90", "p95", "p99", "mean"})
      EXPECT_TRUE(j["metrics"][k].contains(p)) << k << "." << p;
  for (const char* k : {"throughput_rps", "output_tokens_per_s", "goodput_rps"})
    EXPECT_TRUE(j["metrics"].contains(k)) << k;
}

TEST(ServingSim, DisaggregationRunsAndTransfersKv) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto s = small_setup(200, 10);
  s.engine = engine_options_from_json(
      {{"disaggregation", {{"prefill_instances", 1}, {"decode_instances", 2}}}}, s.serving);
  SimOptions o;
  o.check_invariants_every = 5;
  sim::ChromeTrace trace;
  o.trace = &trace;
  auto r = simulate_serving(s, cm, o);
  EXPECT_EQ(r.instances.size(), 3u);
  EXPECT_GT(r.kv_transfers, 150);
  EXPECT_EQ(r.kv_link, "nvlink");
  EXPECT_GT(trace.size(), 100u);
  EXPECT_NE(trace.str().find("kv_transfer"), std::string::npos);
}

// Every simulated step in the trace says where its time went: its parts (GEMMs, attention,
// communication, memory-bound kernels, eager issue, host) add up to the step (no swaps or draft
// model here, which would add their own time).
TEST(ServingSim, TraceStepsCarryTheirParts) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  SimOptions o;
  sim::ChromeTrace trace;
  o.trace = &trace;
  simulate_serving(small_setup(50, 10), cm, o);
  const Json t = parse_json_text(trace.str(), "trace");
  int steps = 0;
  for (const Json& e : t.at("traceEvents")) {
    if (e.value("cat", "") != "step") continue;
    const Json& a = e.at("args");
    if (a.value("swap_ms", 0.0) > 0) continue;
    double sum = 0;
    for (const char* k : {"gemm_ms", "attention_ms", "comm_ms", "other_ms", "launch_ms", "host_ms"}) {
      ASSERT_TRUE(a.contains(k)) << k;
      EXPECT_GE(a.at(k).get<double>(), 0.0) << k;
      sum += a.at(k).get<double>();
    }
    EXPECT_GT(a.at("gemm_ms").get<double>(), 0.0);
    EXPECT_NEAR(sum, e.at("dur").get<double>() / 1e3, 1e-3) << e.dump();
    ++steps;
  }
  EXPECT_GT(steps, 10);
}

TEST(ServingSim, StaticBatchingAndMultiTurnSessionsFinish) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto s = small_setup(200, 20);
  s.engine = engine_options_from_json({{"batching", "static"}}, s.serving);
  SimOptions o;
  o.check_invariants_every = 3;
  auto r = simulate_serving(s, cm, o);
  EXPECT_LT(r.metrics.useful_compute_fraction, 1.0);
  auto t = small_setup(60, 2);
  t.workload = workload_from_json({{"requests", 60},
                                   {"sessions", {{"turns", 4}, {"think_time_s", 1}}},
                                   {"arrival", {{"rate_per_s", 2}}},
                                   {"prompt_tokens", 300},
                                   {"output_tokens", 50}},
                                  2);
  auto rt = simulate_serving(t, cm, o);
  EXPECT_GT(rt.metrics.prefix_hit_rate, 0.3) << "later turns reuse the conversation's KV";
}

TEST(ServingSim, ErrorsNameTheProblem) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto s = small_setup(10, 1);
  s.model = model::preset("llama3-70b");
  try {
    simulate_serving(s, cm);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no room for KV"), std::string::npos) << e.what();
  }
  s = small_setup(10, 1);
  s.serving.replicas = 9;
  EXPECT_THROW(simulate_serving(s, cm), Error);
  EXPECT_THROW(engine_options_from_json({{"scheduler", "lifo"}}, s.serving), Error);
  s = small_setup(10, 1);
  s.serving.gpu_memory_utilization = 0.22;  // a few thousand tokens of KV
  s.workload.classes[0].prompt = LengthDist{};
  s.workload.classes[0].prompt.mean = 200000;
  try {
    simulate_serving(s, cm);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokens of KV"), std::string::npos) << e.what();
  }
  EXPECT_THROW(engine_options_from_json({{"speculative", {{"method", "draft"}}}}, s.serving), Error);
}

TEST(ServingSim, RandomConfigurationsKeepEveryInvariant) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  const std::vector<Json> engines = {
      {{"scheduler", "priority"}, {"preemption", "swap"}, {"chunk_tokens", 256}},
      {{"chunked_prefill", false}, {"routing", "prefix_aware"}},
      {{"speculative", {{"method", "ngram"}, {"k", 3}, {"acceptance", 0.6}}},
       {"routing", "least_outstanding"}},
      {{"speculative", {{"method", "eagle"}, {"k", 2}}}, {"preemption", "swap"}},
      {{"disaggregation", {{"prefill_instances", 1}, {"decode_instances", 1}}}, {"scheduler", "priority"}},
      {{"batching", "static"}},
  };
  for (std::size_t i = 0; i < engines.size(); ++i) {
    auto s = small_setup(250, 60, 100 + i);
    s.serving.gpu_memory_utilization = 0.24;
    s.workload.classes[0].priority_levels = 3;
    s.engine = engine_options_from_json(engines[i], s.serving);
    SimOptions o;
    o.check_invariants_every = 1;
    ServingResult r;
    ASSERT_NO_THROW(r = simulate_serving(s, cm, o)) << engines[i].dump();
    EXPECT_EQ(r.metrics.requests, 250) << engines[i].dump();
  }
}

TEST(ServingSim, KvTransfersAsSimGridFlows) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto s = small_setup(120, 20);
  s.cluster = hw::cluster_preset("dgx-h100", 2);
  s.engine = engine_options_from_json(
      {{"disaggregation",
        {{"prefill_instances", 4}, {"decode_instances", 1}, {"decode_tp", 8}, {"kv_flows", "simgrid"}}}},
      s.serving);
  auto a = simulate_serving(s, cm);
  auto b = simulate_serving(s, cm);
  EXPECT_EQ(a.kv_transfers, 120);
  EXPECT_EQ(a.kv_link, "ib");
  EXPECT_GT(a.kv_transfer_ms_mean, 0.0);
  EXPECT_EQ(a.to_json().dump(), b.to_json().dump());
}

// A closed loop of N clients keeps exactly N requests in flight (think time 0) until the
// workload runs out, and each client's next request is sent when its previous one finished.
TEST(ServingSim, ClosedLoopKeepsExactlyNInFlight) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  for (int n : {1, 5, 24}) {
    auto s = small_setup(120, 1);
    s.serving.replicas = 1;
    s.workload = workload_from_json({{"requests", 120},
                                     {"arrival", {{"type", "closed"}, {"concurrency", n}}},
                                     {"prompt_tokens", {{"dist", "uniform"}, {"min", 100}, {"max", 900}}},
                                     {"output_tokens", {{"dist", "uniform"}, {"min", 20}, {"max", 200}}}},
                                    3);
    auto r = simulate_serving(s, cm);
    ASSERT_EQ(r.requests.size(), 120u);
    std::vector<double> arrivals;
    for (const auto& rec : r.requests) arrivals.push_back(rec.arrival_s);
    std::sort(arrivals.begin(), arrivals.end());
    const double last_send = arrivals.back();
    std::vector<double> times = arrivals;
    for (const auto& rec : r.requests) times.push_back(rec.finish_s);
    for (double t : times) {
      std::int64_t in_flight = 0;
      for (const auto& rec : r.requests) in_flight += rec.arrival_s <= t && t < rec.finish_s;
      EXPECT_LE(in_flight, n) << "t=" << t;
      if (t <= last_send) {
        EXPECT_EQ(in_flight, n) << "n=" << n << " t=" << t;
      }
    }
    // Every request after the first n was sent at the finish time of an earlier one.
    std::vector<double> finishes;
    for (const auto& rec : r.requests) finishes.push_back(rec.finish_s);
    for (std::size_t i = std::size_t(n); i < arrivals.size(); ++i)
      EXPECT_NE(std::find(finishes.begin(), finishes.end(), arrivals[i]), finishes.end());
  }
}

TEST(ServingSim, ClosedLoopThinkTimeDelaysTheNextRequest) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto s = small_setup(40, 1);
  s.workload =
      workload_from_json({{"requests", 40},
                          {"arrival", {{"type", "closed"}, {"concurrency", 2}, {"think_time_s", 0.5}}},
                          {"prompt_tokens", 200},
                          {"output_tokens", 20}},
                         3);
  auto r = simulate_serving(s, cm);
  std::vector<double> finishes;
  for (const auto& rec : r.requests) finishes.push_back(rec.finish_s);
  for (const auto& rec : r.requests) {
    if (rec.arrival_s == 0) continue;
    bool follows = false;
    for (double f : finishes) follows |= std::abs(rec.arrival_s - (f + 0.5)) < 1e-9;
    EXPECT_TRUE(follows) << "request " << rec.id << " sent at " << rec.arrival_s;
  }
  EXPECT_LT(r.metrics.throughput_rps, 2.0 / 0.5) << "two clients thinking 0.5 s each";
}

// Reserve admission under a KV pool that forces on-demand admission to preempt.
TEST(ServingSim, ReserveAdmissionNeverPreemptsAndEveryRequestFinishes) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto s = small_setup(400, 100);
  s.serving.gpu_memory_utilization = 0.23;
  s.engine = engine_options_from_json({{"admission", "reserve"}}, s.serving);
  ASSERT_EQ(s.engine.sched.admission, Admission::Reserve);
  SimOptions o;
  o.check_invariants_every = 5;
  auto r = simulate_serving(s, cm, o);
  EXPECT_EQ(r.requests.size(), 400u);
  EXPECT_EQ(r.metrics.preemptions, 0);
  auto od = small_setup(400, 100);
  od.serving.gpu_memory_utilization = 0.23;
  EXPECT_GT(simulate_serving(od, cm).metrics.preemptions, 0);
  EXPECT_EQ(r.to_json()["config"]["engine"]["admission"], "reserve");
}

TEST(ServingSim, DisaggregationWithStaticBatchingFreesEachBlockOnce) {
  // Used to abort (free(): invalid next size) or throw "BlockManager: double free": a prefill
  // instance's finished sequences were freed both by their static batch and by the engine after
  // the KV transfer.
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  for (int max_seqs : {4, 128}) {
    auto s = small_setup(150, 30);
    s.serving.max_num_seqs = max_seqs;
    s.engine = engine_options_from_json(
        {{"batching", "static"}, {"disaggregation", {{"prefill_instances", 1}, {"decode_instances", 2}}}},
        s.serving);
    SimOptions o;
    o.check_invariants_every = 1;
    auto r = simulate_serving(s, cm, o);
    ASSERT_EQ(r.requests.size(), 150u);
    EXPECT_GT(r.kv_transfers, 100);
    for (const auto& rec : r.requests) {
      EXPECT_GE(rec.first_token_s, rec.arrival_s);
      EXPECT_GE(rec.finish_s, rec.first_token_s);
    }
    // The decode instances receive computed KV: they never prefill the prompts again, so the
    // tokens computed are each prompt once plus the output tokens.
    std::int64_t prompts = 0, outputs = 0;
    for (const auto& rec : r.requests) prompts += rec.prompt_tokens, outputs += rec.output_tokens;
    EXPECT_LE(r.metrics.mean_batch_tokens * double(r.metrics.steps), double(prompts + outputs) + 1.0);
  }
}

TEST(ServingSim, LateStartKeepsItsPrecisionAndIdleTimeIsFree) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  auto at = [&](double start_s) {
    auto s = small_setup(20, 5, 9);
    s.workload.classes[0].arrival.start_s = start_s;
    return simulate_serving(s, cm);
  };
  const auto a = at(0), b = at(9e8);
  EXPECT_NEAR(a.metrics.duration_s, b.metrics.duration_s, 1e-6);
  EXPECT_NEAR(a.metrics.ttft_ms.p50, b.metrics.ttft_ms.p50, 1e-3);
  EXPECT_NEAR(b.requests.front().arrival_s, 9e8, 1);
  // Two requests 10^8 s apart: the idle gap costs nothing.
  auto s = small_setup(2, 1);
  s.requests = make_requests(s.workload);
  s.requests[1].arrival_s = 1e8;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = simulate_serving(s, cm);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(r.requests.size(), 2u);
}
