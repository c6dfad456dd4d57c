// The serving engine under random configurations — static and continuous batching, PD
// disaggregation, speculative decoding, prefix caching, preemption by recompute and by swap,
// chunked prefill, priorities, multi-turn sessions — with the block manager's invariants
// checked after every engine step: reference counts equal block-table occurrences, every block
// in exactly one state, the cache map consistent. Each run also checks that every request
// finishes exactly once with all its tokens (the simulator throws otherwise) and that no metric
// is NaN. The million-step test is the long one (a few minutes in the sanitizer build).
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "hardware/roofline_cost_model.hpp"
#include "common/error.hpp"
#include "simulator/serving_random.hpp"
#include "simulator/serving_sim.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {

struct Totals {
  std::int64_t steps = 0, runs = 0, refused = 0, preemptions = 0, transfers = 0;
};

double pick(Rng& r, double lo, double hi) { return lo + (hi - lo) * r.uniform(); }
bool chance(Rng& r, double p) { return r.uniform() < p; }

/// One random deployment and workload; nullopt-like flag when the combination is invalid.
ServingSetup random_setup(Rng& r, std::uint64_t seed) {
  ServingSetup s;
  s.name = "random";
  s.model = model::preset("llama3-8b");
  s.cluster = hw::cluster_preset("dgx-h100");
  s.serving.replicas = int(r.uniform_int(1, 3));
  s.serving.max_num_seqs = int(r.uniform_int(2, 96));
  s.serving.max_batched_tokens = r.uniform_int(256, 8192);
  s.serving.block_size = chance(r, 0.5) ? 16 : int(r.uniform_int(1, 64));
  // Weights take ~0.2 of an H100: this leaves a few hundred to a few thousand KV blocks, so
  // admission control, preemption and swapping are all exercised.
  s.serving.gpu_memory_utilization = pick(r, 0.22, 0.3);
  const bool static_batch = chance(r, 0.25);
  Json e = Json::object();
  e["batching"] = static_batch ? "static" : "continuous";
  e["scheduler"] = chance(r, 0.3) ? "priority" : "fcfs";
  e["preemption"] = chance(r, 0.5) ? "swap" : "recompute";
  e["chunked_prefill"] = chance(r, 0.7);
  if (chance(r, 0.3)) e["chunk_tokens"] = r.uniform_int(16, 1024);
  e["watermark"] = pick(r, 0, 0.08);
  e["swap_space_GiB"] = pick(r, 0, 2);
  if (!static_batch) e["prefix_cache"] = chance(r, 0.6);
  if (!static_batch && chance(r, 0.35))
    e["speculative"] = {{"method", chance(r, 0.5) ? "ngram" : "eagle"}, {"k", r.uniform_int(1, 5)},
                        {"acceptance", pick(r, 0.1, 0.95)}};
  if (chance(r, 0.3))
    e["disaggregation"] = {{"prefill_instances", r.uniform_int(1, 2)}, {"decode_instances", r.uniform_int(1, 2)}};
  const std::int64_t max_prompt = r.uniform_int(64, 3000);
  Json w = {{"requests", r.uniform_int(20, 160)},
            {"arrival", {{"type", chance(r, 0.5) ? "poisson" : "gamma"}, {"rate_per_s", pick(r, 2, 300)}, {"cv", pick(r, 0.5, 3)}}},
            {"prompt_tokens", {{"dist", "lognormal"}, {"mean", pick(r, 16, double(max_prompt))}, {"sigma", 0.8}, {"max", max_prompt}}},
            {"output_tokens", {{"dist", "lognormal"}, {"mean", pick(r, 2, 200)}, {"sigma", 0.8}, {"max", 600}}}};
  if (chance(r, 0.5)) w["prefix"] = {{"groups", r.uniform_int(1, 6)}, {"shared_tokens", r.uniform_int(0, 512)}};
  if (chance(r, 0.3)) w["sessions"] = {{"turns", r.uniform_int(2, 4)}, {"think_time_s", pick(r, 0, 2)}};
  if (e["scheduler"] == "priority") w["priority"] = {{"levels", r.uniform_int(2, 4)}};
  s.engine = engine_options_from_json(e, s.serving);
  s.workload = workload_from_json(w, seed);
  return s;
}

Totals run_random(std::uint64_t seed, std::int64_t target_steps) {
  hw::RooflineCostModel cm(hw::find_gpu("h100-sxm5-80gb"));
  Rng r(seed);
  Totals t;
  while (t.steps < target_steps) {
    const std::uint64_t run_seed = seed * 1000003 + std::uint64_t(t.runs + t.refused);
    ServingSetup s;
    try {
      s = random_setup(r, run_seed);
    } catch (const Error&) {
      ++t.refused;
      continue;
    }
    SimOptions o;
    o.check_invariants_every = 1;
    ServingResult res;
    try {
      res = simulate_serving(s, cm, o);
    } catch (const Error& err) {
      // A request larger than a tiny KV cache, or weights that leave none, are refused up front;
      // those are valid answers.
      ++t.refused;
      const std::string w = err.what();
      EXPECT_TRUE(w.find("tokens of KV") != std::string::npos || w.find("no room for KV") != std::string::npos) << w;
      continue;
    }
    ++t.runs;
    EXPECT_EQ(res.requests.size(), make_requests(s.workload).size());
    for (const auto& rec : res.requests) {
      EXPECT_GE(rec.first_token_s, rec.arrival_s);
      EXPECT_GE(rec.finish_s, rec.first_token_s);
    }
    const std::string j = res.to_json().dump();
    EXPECT_EQ(j.find("null"), std::string::npos) << "a metric is NaN or infinite: " << j.substr(0, 400);
    for (const auto& i : res.instances) t.steps += i.steps;
    t.preemptions += res.metrics.preemptions;
    t.transfers += res.kv_transfers;
    if (::testing::Test::HasFailure()) break;
  }
  return t;
}

}  // namespace

TEST(ServingInvariants, RandomConfigurationsQuick) {
  const Totals t = run_random(7, 30000);
  EXPECT_GE(t.steps, 30000);
  EXPECT_GT(t.preemptions, 0);
  EXPECT_GT(t.transfers, 0);
  EXPECT_LT(t.refused, t.runs);
}

TEST(ServingInvariants, RandomConfigurationsMillionSteps) {
  const Totals t = run_random(20261201, 1000000);
  EXPECT_GE(t.steps, 1000000);
  EXPECT_GT(t.preemptions, 0);
  EXPECT_GT(t.transfers, 0);
  std::printf("%lld runs, %lld engine steps checked, %lld preemptions, %lld KV transfers, %lld refused\n",
              (long long)t.runs, (long long)t.steps, (long long)t.preemptions, (long long)t.transfers,
              (long long)t.refused);
}
