#pragma once
// simulate_serving: runs a workload through a serving deployment in simulated time and reports
// latency, throughput, goodput and engine statistics. Deterministic: the same setup and seed
// give the same result, byte for byte. No global state: each call owns its clock, event queue,
// ids and random streams, so calls may run concurrently (the CostModel is only read).
//
// Deployment: `serving.replicas` aggregated replicas of `serving.tp` GPUs each, or, with
// engine.pd.enabled, prefill and decode pools with their own instance counts and TP. KV
// capacity per instance comes from the memory ledger (strategies/memory_ledger.hpp) minus the
// draft model's weights when speculative decoding uses one.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/cost_model.hpp"
#include "model/model_spec.hpp"
#include "simulator/chrome_trace.hpp"
#include "simulator/execution_backend.hpp"
#include "simulator/metrics.hpp"
#include "simulator/serving_engine.hpp"
#include "simulator/serving_kv_transfer.hpp"
#include "simulator/serving_options.hpp"
#include "simulator/workload.hpp"
#include "strategies/scenario.hpp"
#include "strategies/serving_config.hpp"

namespace infraplan::sim::serve {

/// Everything a serving simulation needs besides the cost model.
struct ServingSetup {
  std::string name;
  model::ModelSpec model;
  hw::Cluster cluster;
  strat::ServingConfig serving;
  /// Engine settings. Its sched.max_num_seqs / max_batched_tokens / spec_tokens are ignored:
  /// the simulation takes them from `serving` and `engine.spec`.
  EngineOptions engine;
  WorkloadSpec workload;
  /// When non-empty, replayed instead of generating requests from `workload` (ids must be
  /// 0..n−1 in arrival order).
  std::vector<Request> requests;
};

/// Builds a setup from a loaded scenario (serving engine keys and workload parsed here).
ServingSetup serving_setup_from_scenario(const strat::Scenario& sc);

/// The wall clock of a real-time run (`bench serve`): the driver then waits for arrivals in
/// real time and takes each step's end from this clock instead of adding its predicted duration.
class RunClock {
 public:
  virtual ~RunClock() = default;
  /// Seconds since the run started.
  virtual double now_s() const = 0;
  /// Returns once now_s() ≥ `t_s`.
  virtual void wait_until(double t_s) = 0;
};

/// Makes the execution backend of one instance. It may lower `spec.num_blocks` to the KV blocks
/// it could really allocate (the block manager is then built with that many).
using BackendFactory = std::function<std::unique_ptr<ExecutionBackend>(
    InstanceSpec& spec, const strat::ServingConfig& instance_serving)>;
/// Debug and sanitizer builds check the block manager's invariants after every engine step (the
/// live sequences' blocks every step, the whole manager every num_blocks/64 steps:
/// ServingEngine::check_invariants); release builds only when asked (SimOptions::check_invariants_every).
#if defined(INFRAPLAN_CHECKED_BUILD) || !defined(NDEBUG)
inline constexpr std::int64_t kDefaultInvariantCheckEvery = 1;
#else
inline constexpr std::int64_t kDefaultInvariantCheckEvery = 0;
#endif

struct SimOptions {
  bool keep_requests = true;                ///< fill ServingResult::requests
  ChromeTrace* trace = nullptr;             ///< record steps and KV transfers here when set
  double sample_interval_s = 0.5;           ///< time-series period, simulated seconds
  /// > 0: check block-manager invariants every N steps (tests; every step in checked builds)
  std::int64_t check_invariants_every = kDefaultInvariantCheckEvery;
  /// nullptr: CollectivesKvTransfer (send/recv on the cluster's fabric, collectives library).
  const KvTransferModel* kv_transfer = nullptr;
  /// nullptr: CollectivesTpComm (NCCL-like all-reduce model of the collectives library).
  const TpCommModel* tp_comm = nullptr;
  /// Empty: SimulatedBackend priced by the cost model (a simulation). Set: real backends.
  BackendFactory backend_factory;
  /// Set together with a real backend: steps take real time and arrivals wait for the clock.
  RunClock* clock = nullptr;
  /// Simulated steps follow the board's power limiter (BackendOptions::power_limited) where the
  /// profile has a power law and a limiter time constant; false: every step at the clock the GEMM
  /// tables refer to.
  bool power_limited = true;
};

/// One instance of the deployment.
struct InstanceSummary {
  std::string role;  ///< "replica", "prefill" or "decode"
  int tp = 1;
  std::vector<int> gpus;  ///< cluster GPU ranks
  std::int64_t kv_capacity_tokens = 0;
  std::int64_t requests = 0;  ///< requests it served (prefilled, for a prefill instance; decoded otherwise)
  std::int64_t steps = 0;
  double busy_fraction = 0;
  std::int64_t preemptions = 0;
  double prefix_hit_rate = 0;
};

struct ServingResult {
  ServingMetrics metrics;
  std::vector<RequestRecord> requests;  ///< by id (when keep_requests)
  std::vector<InstanceSummary> instances;
  LatencyDistributions distributions;  ///< quantile curves for CDF plots
  std::int64_t kv_transfers = 0;   ///< PD: KV transfers made
  double kv_transfer_ms_mean = 0;  ///< PD: mean transfer time including link queueing, ms
  Percentiles kv_transfer_ms;      ///< PD: distribution of the same times, ms
  double kv_transfer_bytes = 0;    ///< PD: bytes moved by all transfers
  std::string kv_link;             ///< PD: link class of the first transfer ("nvlink", "ib", ...)
  Json config;                     ///< resolved setup (serving, engine, workload, seed)
  /// {"scenario", "config", "metrics", "instances", ...}: the stable machine-readable report;
  /// with_series adds "metrics.series" and "distributions".
  Json to_json(bool with_series = true) const;
};

/// KV capacity of one instance of `tp` GPUs per pipeline stage, tokens: the memory ledger's
/// (strat::serving_kv_capacity_tokens at serving.gpu_memory_utilization) minus the speculative
/// proposer's weights when `with_proposer` (decode and aggregated instances run the proposer).
std::int64_t instance_kv_capacity_tokens(const ServingSetup& s, int tp, bool with_proposer);

/// Runs the simulation. Throws infraplan::Error when the deployment cannot serve the workload
/// (weights do not fit, more GPUs than the cluster has, a request larger than the KV cache).
ServingResult simulate_serving(const ServingSetup& setup, const hw::CostModel& cm,
                               const SimOptions& opt = {});

}  // namespace infraplan::sim::serve
