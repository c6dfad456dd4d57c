#pragma once
// Runs a priced work graph on SimGrid through the collectives flow engine (coll::FlowSim): every
// compute op is a delay on its GPU's stream, every collective is lowered into its algorithm's
// per-step flows on the cluster's links, every pipeline send is a flow, so links shared by
// concurrent collectives (DP buckets with TP all-reduces, PP sends with DP traffic on the same
// NIC) slow each other down. In exact mode each joined collective is simulated once for all its
// members; in symmetric mode each collective of the representative pipeline runs on its real
// rank group.
#include "collectives/flow_sim.hpp"
#include "simulator/work_graph_executor.hpp"

namespace infraplan::sim::train {

struct FlowSimRun {
  ExecutionTimes times;
  long long activities = 0;  ///< SimGrid activities created
  double wall_s = 0;         ///< host seconds the SimGrid run took
};

/// Simulates `g` (comm ops priced or not: SimGrid times them) on `comm`'s cluster and profile.
FlowSimRun execute_on_simgrid(const strat::WorkGraph& g, const coll::CommModel& comm,
                              coll::FlowSimOptions options = {});

}  // namespace infraplan::sim::train
