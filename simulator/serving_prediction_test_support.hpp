#pragma once
// Test support: a bench scenario's serving metrics as `infraplan validate serve` predicts them (the
// scenario's workload and seed, the embedded profile of its GPU, the power limiter where the profile
// has one), for the tests that hold stored measurements against the model.
#include "hardware/calibrated_cost_model.hpp"
#include "simulator/serving_sim.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::sim::serve {

inline ServingMetrics predicted_as_validate_serve(const strat::Scenario& sc) {
  const auto setup = serving_setup_from_scenario(sc);
  auto cost = hw::make_calibrated_cost_model(sc.cluster.gpu.name);
  SimOptions o;
  o.keep_requests = false;
  o.power_limited = cost->has_power_limiter();
  return simulate_serving(setup, *cost, o).metrics;
}

}  // namespace infraplan::sim::serve
