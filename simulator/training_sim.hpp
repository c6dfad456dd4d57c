#pragma once
// Training simulation: iteration time, throughput, MFU/HFU, memory and where the time goes for
// one (model, cluster, training config), with op durations from a hw::CostModel and collective
// times from coll::CommModel on the cluster's real topology.
//
// Two entry points over the same ops (strategies/training_ops.hpp):
//  - estimate_training: closed form from one layer's ops per stage and the schedule's bubble
//    (microseconds; the planner's inner loop).
//  - simulate_training: builds the work graph of one iteration (strategies/work_graph.hpp) and
//    executes it event by event: per GPU a compute stream and communication streams, so overlap
//    of DP buckets with backward, of ring-attention passes with attention, and pipeline bubbles
//    come out of the execution rather than a formula. Symmetric mode (one lane per pipeline
//    stage) for any size; exact mode (every GPU) for small clusters.
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "collectives/comm_model.hpp"
#include "hardware/cluster.hpp"
#include "hardware/cost_model.hpp"
#include "common/json_util.hpp"
#include "model/model_spec.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/training_config.hpp"
#include "strategies/work_graph.hpp"
#include "simulator/sustained_clock.hpp"
#include "simulator/work_graph_executor.hpp"

namespace infraplan::sim::train {

enum class Mode { Auto, Symmetric, Exact };
/// Events: the built-in event executor with collective times from coll::CommModel (fast; no
/// contention between concurrent collectives). SimGrid: the collectives flow engine, flows
/// sharing links max-min fairly (contention simulated; slower).
enum class Backend { Events, SimGrid };

struct TrainingOptions {
  Mode mode = Mode::Auto;
  Backend backend = Backend::Events;
  int exact_max_gpus = 64;             ///< Auto: exact up to this many GPUs (and work_graph_layer_steps), symmetric above
  strat::WorkGraphOptions graph;       ///< bucket size, Ulysses CP (graph.exact is set by mode)
  bool keep_graph = false;             ///< keep the graph and times in the result (for traces)
  bool free_comm = false;              ///< every communication op takes 0 s (schedule checks)
  /// Price the step at the clock the profile's power law gives it (simulator/sustained_clock.hpp);
  /// false (default): at the clock the GEMM tables refer to. No effect without a power section.
  bool sustained_clock = false;
};

/// Seconds of one iteration by what the GPU was doing (on the reported lane). The parts add up
/// to the iteration time: compute + recompute + optimizer + Σ exposed_comm + host_wait + bubble.
struct TimeBreakdown {
  double compute = 0;     ///< forward/backward kernels (GEMMs, attention, norms, elementwise)
  double recompute = 0;   ///< activation-recompute kernels
  double optimizer = 0;   ///< optimizer step
  std::map<std::string, double> exposed_comm;  ///< "tp","cp","ep","pp","dp": compute stream idle waiting on it
  double host_wait = 0;   ///< GPU idle waiting for the host to issue ops (eager host-dispatch floor)
  double bubble = 0;      ///< compute stream idle with nothing in flight (pipeline fill/drain)
  double exposed_comm_total() const;
  Json to_json() const;
};

/// One stretch of the critical path.
struct CriticalSegment {
  std::string category;  ///< op category ("compute", "tp", "pp", ...)
  double seconds = 0;
  int ops = 0;
};

struct TrainingEstimate {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;          ///< model FLOPs / (GPUs × time × dense peak of the GEMM dtype)
  double hfu = 0;          ///< hardware FLOPs (recompute included) on the same basis
  double peak_bytes = 0;   ///< largest per-GPU memory over stages (memory ledger)
  bool fits = true;        ///< peak_bytes ≤ GPU memory
  TimeBreakdown breakdown; ///< of the slowest stage
  std::optional<StepClock> clock;  ///< the sustained clock (profiles with a power section)
  Json to_json() const;
};

struct TrainingResult {
  std::string mode;              ///< "exact" or "symmetric"
  std::string backend;           ///< "events" or "simgrid"
  long long simgrid_activities = 0;  ///< SimGrid activities created (simgrid backend)
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0, hfu = 0;
  double model_flops = 0;        ///< per iteration, whole cluster
  double peak_flops = 0;         ///< per GPU, FLOP/s of the GEMM dtype
  double peak_bytes = 0;
  strat::MemoryLedger ledger;    ///< the peak stage's ledger
  TimeBreakdown breakdown;       ///< of the reported lane (the busiest stage)
  int reported_stage = 0;
  std::vector<TimeBreakdown> stage_breakdown;  ///< per pipeline stage (first lane of each)
  std::vector<CriticalSegment> critical_path;  ///< consecutive ops merged by category, in time order
  std::map<std::string, double> comm_bytes_per_gpu;  ///< wire bytes a GPU sends per kind (busiest lane)
  std::map<std::string, double> comm_size_per_gpu;   ///< nccl-tests sizes summed per kind (busiest lane)
  std::size_t ops = 0, lanes = 0;
  std::vector<std::string> warnings;
  /// The busiest GPU's (most matmul FLOPs) work per iteration: matmul FLOPs (recompute included)
  /// and HBM bytes of its memory-bound kernels.
  double work_flops_per_gpu = 0, work_bytes_per_gpu = 0;
  int busiest_lane = 0;          ///< the lane of that GPU
  std::optional<StepClock> clock;  ///< the sustained clock (profiles with a power section)
  strat::WorkGraphOptions graph_options;  ///< what the graph was built with (exact or symmetric)
  strat::WorkGraph graph;        ///< filled when keep_graph
  ExecutionTimes times;          ///< filled when keep_graph
  Json to_json() const;
};

/// Dense peak FLOP/s of the precision recipe's GEMM dtype on the GPU.
double peak_flops_of(const hw::GpuSpec& g, strat::Precision p);

/// Collective times shared by the estimates of many layouts on one cluster and CommModel (a
/// planner's search): keyed by the parallel degrees that shape the groups, the group kind, the
/// op, the size and the rank, so layouts that differ only in ZeRO stage, micro-batch,
/// recompute or schedule price their collectives once. Not thread-safe.
class CommSecondsCache {
 public:
  using Key = std::tuple<int, int, int, int, int, int, int, int, double, int>;
  const double* find(const Key& k) const {
    auto it = map_.find(k);
    return it == map_.end() ? nullptr : &it->second;
  }
  void put(const Key& k, double s) { map_.emplace(k, s); }
  std::size_t size() const { return map_.size(); }

 private:
  std::map<Key, double> map_;
};

/// Fast closed-form estimate. `t` must be resolved (strat::resolve_training). `shared`, when
/// given, must belong to this cluster and `comm` (CommSecondsCache).
TrainingEstimate estimate_training(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                                   const hw::CostModel& cost, const coll::CommModel& comm,
                                   CommSecondsCache* shared = nullptr, bool sustained_clock = false);

/// Layer passes (forward and backward, over every lane and micro-batch) the event simulation of
/// one iteration runs; simulate_training refuses more than limits::kMaxWorkGraphLayerSteps.
std::int64_t work_graph_layer_steps(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                                   bool exact);
/// Event-driven simulation of one iteration. `t` must be resolved. Throws infraplan::Error when
/// the work graph would be beyond the limit (work_graph_layer_steps).
TrainingResult simulate_training(const model::ModelSpec& m, const hw::Cluster& c, const strat::TrainingConfig& t,
                                 const hw::CostModel& cost, const coll::CommModel& comm,
                                 const TrainingOptions& o = {});

/// Prices the communication ops of `g` with `comm` (one estimate per distinct (op, size, group)).
void price_comm_ops(strat::WorkGraph& g, const coll::CommModel& comm);

}  // namespace infraplan::sim::train
