// Planner search speed: the full training search for llama3-70b on 1,024 H100s (seq 8192, global
// batch 1024) and a serving search for llama3-70b on H100s at a rate and SLO pair.
#include <benchmark/benchmark.h>

#include "hardware/calibrated_cost_model.hpp"
#include "planner/serve_planner.hpp"
#include "planner/train_planner.hpp"

using namespace infraplan;

static void BM_PlanTrainLlama3_70b_1024xH100(benchmark::State& state) {
  plan::TrainPlanRequest r;
  r.model = model::preset("llama3-70b");
  r.cluster = hw::cluster_preset("dgx-h100", 128);
  r.search.seq_len = 8192;
  r.search.global_batch = 1024;
  r.top = 5;
  auto cost = hw::make_calibrated_cost_model("h100-sxm5-80gb");
  coll::CommModel comm(r.cluster);
  std::int64_t layouts = 0;
  for (auto _ : state) {
    auto p = plan::plan_training(r, *cost, comm);
    layouts = p.layouts_visited + p.rejected.total();
    benchmark::DoNotOptimize(p.candidates.front().iteration_time_s);
  }
  state.counters["layouts"] = double(layouts);
  state.counters["layouts_per_s"] = benchmark::Counter(double(layouts), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PlanTrainLlama3_70b_1024xH100)->Unit(benchmark::kSecond)->Iterations(1);

static void BM_PlanServeLlama3_70b_H100(benchmark::State& state) {
  plan::ServeSearch s;
  s.model = model::preset("llama3-70b");
  s.gpu = hw::find_gpu("h100-sxm5-80gb");
  s.target_rate = 10;
  s.workload = sim::serve::workload_from_json(
      Json{{"requests", 300},
           {"prompt_tokens", {{"dist", "lognormal"}, {"mean", 2000}, {"sigma", 0.5}, {"max", 8000}}},
           {"output_tokens", {{"dist", "lognormal"}, {"mean", 500}, {"sigma", 0.5}, {"max", 2000}}}},
      1);
  s.workload.slo = {2000, 50};
  auto cost = hw::make_calibrated_cost_model("h100-sxm5-80gb");
  std::int64_t sims = 0;
  for (auto _ : state) {
    auto p = plan::plan_serving(s, *cost);
    sims = p.simulations;
    benchmark::DoNotOptimize(p.candidates.front().goodput_rps);
  }
  state.counters["simulations"] = double(sims);
}
BENCHMARK(BM_PlanServeLlama3_70b_H100)->Unit(benchmark::kSecond)->Iterations(1);

BENCHMARK_MAIN();
