// Time to simulate serving: 100,000 requests (log-normal prompts of mean 2,000 tokens and outputs
// of mean 500) arriving as a Poisson stream at 160 req/s over 16 Llama-3-8B replicas (TP 1) on
// two DGX H100 nodes, continuous batching with chunked prefill and prefix caching; and the same
// deployment under PD disaggregation (6 prefill + 10 decode instances). One core.
// Results: docs/serving.md.
#include <benchmark/benchmark.h>

#include "hardware/roofline_cost_model.hpp"
#include "simulator/serving_sim.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {

ServingSetup setup(bool pd) {
  ServingSetup s;
  s.name = "bench";
  s.model = model::preset("llama3-8b");
  s.cluster = hw::cluster_preset("dgx-h100", 2);
  s.serving.replicas = 16;
  s.serving.max_num_seqs = 256;
  s.serving.max_batched_tokens = 8192;
  Json e = Json::object();
  if (pd) e["disaggregation"] = {{"prefill_instances", 6}, {"decode_instances", 10}};
  s.engine = engine_options_from_json(e, s.serving);
  s.workload = workload_from_json(
      {{"requests", 100000},
       {"arrival", {{"type", "poisson"}, {"rate_per_s", 160}}},
       {"prompt_tokens", {{"dist", "lognormal"}, {"mean", 2000}, {"sigma", 0.5}, {"max", 16000}}},
       {"output_tokens", {{"dist", "lognormal"}, {"mean", 500}, {"sigma", 0.5}, {"max", 4000}}},
       {"slo", {{"ttft_ms", 1000}, {"tpot_ms", 50}}}},
      1);
  return s;
}

void BM_Serve100k(benchmark::State& st) {
  const ServingSetup s = setup(st.range(0) != 0);
  hw::RooflineCostModel cm(s.cluster.gpu);
  SimOptions o;
  o.keep_requests = false;
  ServingResult r;
  for (auto _ : st) r = simulate_serving(s, cm, o);
  st.counters["requests"] = double(r.metrics.requests);
  st.counters["steps"] = double(r.metrics.steps);
  st.counters["simulated_s"] = r.metrics.duration_s;
  st.counters["out_tok_per_s"] = r.metrics.output_tokens_per_s;
  st.counters["ttft_p95_ms"] = r.metrics.ttft_ms.p95;
  st.counters["tpot_p95_ms"] = r.metrics.tpot_ms.p95;
}
BENCHMARK(BM_Serve100k)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
