#pragma once
// ServingEngine: one serving instance (a replica, or a prefill or decode instance under PD):
// its sequences, block manager, scheduler and execution backend. The simulation driver calls
// start_step() when the instance is idle and finish_step() when the step's time has passed; a
// real-time driver could call the same two functions around a CUDA backend.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "simulator/block_manager.hpp"
#include "simulator/execution_backend.hpp"
#include "simulator/metrics.hpp"
#include "simulator/scheduler.hpp"
#include "simulator/serving_options.hpp"
#include "simulator/serving_random.hpp"
#include "simulator/spec_decode.hpp"

namespace infraplan::sim::serve {

enum class Role { Aggregated, Prefill, Decode };
const char* role_name(Role r);

/// Fixed properties of one instance.
struct InstanceSpec {
  Role role = Role::Aggregated;
  int tp = 1;
  std::vector<int> gpus;           ///< cluster GPU ranks it occupies
  std::int32_t num_blocks = 0;     ///< KV blocks
  int block_size = 16;             ///< tokens per block
  std::int64_t host_blocks = 0;    ///< swap space in blocks
  double block_bytes_per_gpu = 0;  ///< KV bytes of one block on one GPU
  double pcie_GBps = 32;           ///< host link for swapping, 1e9 B/s
};

/// What a started step does.
struct StepInfo {
  double duration_s = 0;
  std::int64_t tokens = 0, prefill_tokens = 0, seqs = 0, padding_seqs = 0;
  double swap_s = 0;
  /// The backend's cost of the step: where its time went (a simulated backend's parts; a real one
  /// reports the total only), the captured size it replayed, its launches and clock.
  StepCost cost;
};

class ServingEngine {
 public:
  ServingEngine(int index, const InstanceSpec& spec, const EngineOptions& o,
                std::unique_ptr<ExecutionBackend> backend, SpecProposer* spec_proposer, Rng rng);

  /// Queues a new request.
  void add(const Request& r);
  /// Queues a request whose prefill ran elsewhere: its KV (prompt) has arrived and its first
  /// token was produced at `first_token_s`.
  void add_prefilled(const Request& r, double first_token_s);
  bool busy() const { return busy_; }
  bool has_work() const { return sched_.has_work(); }
  /// Plans and prices a step at `now`; nullopt when nothing can run.
  std::optional<StepInfo> start_step(double now);
  /// Completes the running step at `now`; returns the sequences that finished (still owned
  /// here until forget()/release()). Inter-token gaps go to `itl`.
  std::vector<Sequence*> finish_step(double now, LogHistogram& itl);
  /// Frees the KV a finished PD prefill sequence kept for its transfer, and forgets it.
  void release(std::int64_t id);
  /// Drops a finished sequence.
  void forget(std::int64_t id);

  int index() const { return index_; }
  const InstanceSpec& spec() const { return spec_; }
  std::int64_t outstanding() const { return std::int64_t(seqs_.size() - zombies_.size()); }
  const BlockManager& blocks() const { return bm_; }
  const Scheduler& scheduler() const { return sched_; }
  /// Leading blocks of `r` found in this instance's prefix cache.
  std::int64_t cached_blocks(const Request& r) const;
  /// Invariant check over all live sequences (tests; every step in debug and sanitizer builds):
  /// the live sequences' blocks every call (O(their blocks)), the whole block manager every
  /// num_blocks / 64 calls.
  void check_invariants() const;

  // Accumulated statistics.
  double busy_s = 0;
  std::int64_t steps = 0, tokens = 0, padding_tokens = 0;

 private:
  void check_fits(const Request& r) const;

  int index_;
  InstanceSpec spec_;
  EngineOptions o_;
  BlockManager bm_;
  Scheduler sched_;
  std::unique_ptr<ExecutionBackend> backend_;
  SpecProposer* spec_proposer_;
  Rng rng_;
  std::map<std::int64_t, std::unique_ptr<Sequence>> seqs_;
  std::vector<std::int64_t> zombies_;  // finished, KV still held by a static batch
  SchedulerOutput current_;
  BatchShape shape_;
  mutable std::int64_t invariant_checks_ = 0;
  bool busy_ = false;
  double step_start_ = 0;
};

}  // namespace infraplan::sim::serve
