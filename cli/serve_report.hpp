#pragma once
// The text report of a serving run, the same for `simulate serve` (predicted) and `bench serve`
// (measured): latency table, throughput and goodput, engine statistics.
#include <string>

#include "simulator/serving_sim.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

/// Prints the report; `timing` names where the times come from ("cost model: calibrated h200",
/// "measured on NVIDIA H200"); `after_latency` is printed right under the latency table (the
/// prediction's range, for simulate serve).
void print_serving_report(const strat::Scenario& sc, const sim::serve::ServingSetup& setup,
                          const sim::serve::ServingResult& r, const std::string& timing,
                          const std::string& after_latency = "");

}  // namespace infraplan::cli
