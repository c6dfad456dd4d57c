// Collective model benchmarks: analytical estimates per second on one core, and the SimGrid flow
// simulation of one ring AllReduce over 1,024 GPUs (128 DGX H100 nodes).
#include <benchmark/benchmark.h>

#include <vector>

#include "collectives/comm_model.hpp"
#include "collectives/flow_sim.hpp"

namespace {

using namespace infraplan;

std::vector<int> iota(int n, int start = 0, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i * stride);
  return v;
}

// Planner inner loop: a handful of groups, many sizes; per-group quantities come from the cache.
void BM_AnalyticalEstimate(benchmark::State& state) {
  coll::CommModel m(hw::cluster_preset("dgx-h100", 8));
  const std::vector<std::vector<int>> groups = {iota(8), iota(8, 0, 8), iota(64), iota(16)};
  const coll::CollectiveOp ops[] = {coll::CollectiveOp::AllReduce, coll::CollectiveOp::AllGather,
                                    coll::CollectiveOp::ReduceScatter};
  for (const auto& g : groups)
    for (auto op : ops) m.estimate(op, 1e6, g);  // warm the cache
  double bytes = 1024;
  std::size_t i = 0;
  for (auto _ : state) {
    auto e = m.estimate(ops[i % 3], bytes, groups[i % groups.size()]);
    benchmark::DoNotOptimize(e.seconds);
    bytes = bytes > 4e9 ? 1024 : bytes * 1.7;
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AnalyticalEstimate);

void BM_SimGridRingAllReduce1024(benchmark::State& state) {
  const int barriers = int(state.range(0));
  coll::FlowSimOptions o;
  o.max_barriers_per_collective = barriers;
  for (auto _ : state) {
    coll::FlowSim sim(hw::cluster_preset("dgx-h100", 128), coll::CommProfile(), o);
    sim.add_collective(coll::CollectiveOp::AllReduce, 1 << 30, iota(1024), {}, "comm", coll::Algorithm::Ring,
                       coll::Protocol::Simple);
    auto r = sim.run();
    state.counters["activities"] = double(r.activities);
    state.counters["simulated_ms"] = r.makespan_s * 1e3;
  }
}
BENCHMARK(BM_SimGridRingAllReduce1024)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
