// Time to simulate one training iteration of GPT-3 175B (TP 8, PP 8, interleaved 1F1B, v = 4,
// micro-batch 1, seq 2048, full recompute) on DGX H100 clusters: 1,024 GPUs (DP 16, global batch
// 1536) and 16,384 GPUs (DP 256, global batch 4096), symmetric mode with the event executor,
// and the closed-form estimate. Results: docs/training.md.
#include <benchmark/benchmark.h>

#include "hardware/roofline_cost_model.hpp"
#include "simulator/training_sim.hpp"

using namespace infraplan;

namespace {

struct Setup {
  model::ModelSpec m = model::preset("gpt3-175b");
  hw::Cluster c;
  strat::TrainingConfig t;
  explicit Setup(int gpus, std::int64_t batch) : c(hw::cluster_preset("dgx-h100", gpus / 8)) {
    t.seq_len = 2048, t.micro_batch = 1, t.global_batch = batch, t.tp = 8, t.pp = 8;
    t.pp_schedule = strat::PpSchedule::Interleaved, t.pp_virtual_stages = 4;
    t.recompute = model::Recompute::Full;
    strat::resolve_training(t, m, c);
  }
};

void BM_SimulateGpt3(benchmark::State& st) {
  Setup s(int(st.range(0)), st.range(1));
  hw::RooflineCostModel cost(s.c.gpu);
  coll::CommModel comm(s.c);
  sim::train::TrainingOptions o;
  o.mode = sim::train::Mode::Symmetric;
  double it = 0;
  std::size_t ops = 0;
  for (auto _ : st) {
    auto r = sim::train::simulate_training(s.m, s.c, s.t, cost, comm, o);
    it = r.iteration_time_s, ops = r.ops;
  }
  st.counters["iteration_s"] = it;
  st.counters["ops"] = double(ops);
}
BENCHMARK(BM_SimulateGpt3)->Args({1024, 1536})->Args({16384, 4096})->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_EstimateGpt3(benchmark::State& st) {
  Setup s(int(st.range(0)), st.range(1));
  hw::RooflineCostModel cost(s.c.gpu);
  coll::CommModel comm(s.c);
  double it = 0;
  for (auto _ : st) it = sim::train::estimate_training(s.m, s.c, s.t, cost, comm).iteration_time_s;
  st.counters["iteration_s"] = it;
}
BENCHMARK(BM_EstimateGpt3)->Args({1024, 1536})->Args({16384, 4096})->Unit(benchmark::kMicrosecond);

}  // namespace
