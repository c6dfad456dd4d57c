#pragma once
// A flow-level simulation on SimGrid: a DAG of compute delays on GPUs, point-to-point transfers
// and whole collectives (lowered into their algorithm's per-step flows on the fabric's links),
// with named streams per GPU. Returns when each task started and ended.
//
//   FlowSim sim(cluster);                                  // or (cluster, profile, options)
//   TaskId a = sim.add_compute(0, 1e-3);                   // 1 ms on GPU 0, stream "compute"
//   TaskId b = sim.add_collective(CollectiveOp::AllReduce, 1 << 30, {0,1,2,3}, {a});
//   TaskId c = sim.add_transfer(0, 8, 64 << 20);           // stream "comm" of GPUs 0 and 8
//   SimResult r = sim.run();                               // r.tasks[b].end_s ...
//
// Semantics:
//  - A task starts when all its `deps` and the previous task of each stream it runs on have
//    ended. A compute task runs on (gpu, stream); a transfer on the stream of src and dst; a
//    collective on the stream of every rank of its group. Different streams of one GPU overlap
//    without slowing each other (durations are the caller's); flows share links max-min fairly.
//  - A collective runs as CommModel::lower() plans it: a base latency, then its phases, each a
//    series of step barriers whose flows start together. At most
//    `FlowSimOptions::max_barriers_per_collective` barriers are simulated: consecutive steps are
//    merged into one flow each carrying their bytes, plus a delay for the latencies of the merged
//    steps, so the uncontended time is unchanged (0 = one barrier per algorithm step).
//  - A transfer is one flow of `bytes` / achieved efficiency (intra or inter) on the route.
//  - SimGrid activities are created just in time from completion callbacks and every one is
//    kept alive until the simulation ends (SimGrid 3.32's quadratic comm list and its crash when
//    the last reference goes before completion).
//  - SimGrid 3.32 keeps global state between engines (clock, configuration, platform): a second
//    simulation in one process does not start clean. By default run() therefore simulates in a
//    fork()ed child that sends the results back through a pipe; the calling process never
//    touches SimGrid and can run any number of simulations. See docs/simgrid.md.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectives/comm_model.hpp"

namespace infraplan::coll {

using TaskId = int;

struct TaskTiming {
  double start_s = 0;  ///< simulated time the task started (deps and streams done), seconds
  double end_s = 0;    ///< simulated time it ended, seconds
};

struct SimResult {
  std::vector<TaskTiming> tasks;  ///< indexed by TaskId
  double makespan_s = 0;          ///< end of the last task, seconds
  long long activities = 0;       ///< SimGrid activities (flows + delays) created
  double wall_s = 0;              ///< host wall-clock seconds the run took (incl. fork)
};

struct FlowSimOptions {
  /// Run SimGrid in a fork()ed child (default). false: in this process, which then must not run
  /// another SimGrid simulation (SimGrid 3.32's global state); meant for single-shot tools.
  bool fork = true;
  /// Upper bound on simulated step barriers per collective (see above); 0 = exact.
  int max_barriers_per_collective = 64;
};

class FlowSim {
 public:
  explicit FlowSim(const hw::Cluster& cluster, CommProfile profile = {}, FlowSimOptions options = {});
  ~FlowSim();
  FlowSim(const FlowSim&) = delete;
  FlowSim& operator=(const FlowSim&) = delete;

  /// `seconds` of work on `gpu` (0-based cluster rank) on `stream`.
  TaskId add_compute(int gpu, double seconds, const std::vector<TaskId>& deps = {},
                     const std::string& stream = "compute");
  /// One flow of `bytes` from GPU `src` to GPU `dst`.
  TaskId add_transfer(int src, int dst, double bytes, const std::vector<TaskId>& deps = {},
                      const std::string& stream = "comm");
  /// A collective of nccl-tests size `bytes` on `ranks`; algorithm/protocol as the model picks
  /// unless forced.
  TaskId add_collective(CollectiveOp op, double bytes, const std::vector<int>& ranks,
                        const std::vector<TaskId>& deps = {}, const std::string& stream = "comm",
                        std::optional<Algorithm> algo = std::nullopt,
                        std::optional<Protocol> proto = std::nullopt);
  std::size_t size() const;
  const CommModel& model() const { return model_; }

  /// Simulates the DAG. Throws infraplan::Error if the simulation fails.
  SimResult run() const;

  struct Task;  ///< internal

 private:
  TaskId add(Task t, const std::vector<TaskId>& deps,
             const std::vector<std::pair<int, std::string>>& streams);
  SimResult run_here() const;

  CommModel model_;
  FlowSimOptions options_;
  std::vector<Task> tasks_;
  std::map<std::pair<int, std::string>, TaskId> stream_last_;
};

}  // namespace infraplan::coll
