#pragma once
// `infraplan-bench serve`: a scenario's workload in real time on this machine's GPU — the
// serving simulation's own driver, scheduler, block manager and prefix cache, with CudaBackend
// instead of the cost model and the wall clock instead of simulated time — writing the same
// metrics JSON, per-request CSV and trace as `simulate serve`.
#include <string>
#include <vector>

namespace infraplan::engine {

/// Runs the command; returns the exit code (4 without a GPU).
int bench_serve_main(const std::vector<std::string>& args);

}  // namespace infraplan::engine
