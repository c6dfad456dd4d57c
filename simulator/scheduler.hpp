#pragma once
// Scheduler: decides, step by step, which sequences run and how many tokens each computes.
//
// Continuous batching, chunked prefill on (vLLM v1 style): running sequences first (decodes and
// unfinished prefill chunks), then swapped-out ones, then waiting ones, all within one token
// budget (`max_batched_tokens`) and `max_num_seqs`; prefills may be cut into chunks.
// Continuous batching, chunked prefill off (vLLM v0 style): when waiting prompts fit whole, a
// prefill-only step runs them and the decodes wait; otherwise a decode step runs.
// Static batching: a batch is admitted only when the previous one has completely finished; its
// KV is reserved for prompt + output up front and finished members keep their slot (padding)
// until the longest one ends.
// When a running sequence cannot grow, the lowest-priority running sequence (the latest
// admitted under FCFS) is preempted: its KV is dropped and recomputed later, or swapped to host
// memory over PCIe.
// Admission (continuous batching): "on_demand" admits a sequence when its first chunk fits and
// grows its KV step by step (vLLM; TensorRT-LLM's MAX_UTILIZATION), preempting when the cache
// runs out; "reserve" admits it only when the free blocks cover the whole prompt + output of
// every running sequence and of the new one (TensorRT-LLM's GUARANTEED_NO_EVICT), so nothing is
// ever preempted.
#include <cstdint>
#include <deque>
#include <vector>

#include "simulator/block_manager.hpp"
#include "simulator/sequence.hpp"

namespace infraplan::sim::serve {

enum class Policy { FCFS, Priority };
enum class Preemption { Recompute, Swap };
enum class Batching { Continuous, Static };
enum class Admission { OnDemand, Reserve };
const char* admission_name(Admission a);

struct SchedulerConfig {
  int max_num_seqs = 256;                  ///< running sequences
  std::int64_t max_batched_tokens = 8192;  ///< tokens computed per step
  bool chunked_prefill = true;
  std::int64_t chunk_tokens = 0;  ///< per-sequence cap on a prefill chunk, tokens (0 = budget only)
  Policy policy = Policy::FCFS;
  Preemption preemption = Preemption::Recompute;
  Batching batching = Batching::Continuous;
  Admission admission = Admission::OnDemand;
  int spec_tokens = 0;  ///< speculative draft tokens verified per decode step (k)
};

/// One sequence's share of a step.
struct ScheduledSeq {
  Sequence* seq = nullptr;
  std::int64_t q_tokens = 0;  ///< tokens computed this step
  std::int64_t context = 0;   ///< KV length after the step (cached + new), tokens
  bool prefill = false;       ///< prompt (or recompute) chunk rather than a decode
  bool samples = false;       ///< the step ends with a sampled token for this sequence
};

struct SchedulerOutput {
  std::vector<ScheduledSeq> seqs;
  std::int64_t num_tokens = 0;  ///< Σ q_tokens
  std::int64_t num_prefill_tokens = 0;
  std::int64_t padding_seqs = 0;        ///< static batching: finished members still computed
  std::int64_t padding_context = 0;     ///< their KV length, tokens
  std::int64_t swapped_out_blocks = 0;  ///< moved to host this step
  std::int64_t swapped_in_blocks = 0;   ///< moved back this step
  std::vector<Sequence*> preempted;     ///< preempted this step
  bool empty() const { return seqs.empty(); }
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& cfg, BlockManager& bm);

  /// Queues a new (or, on a PD decode instance, already-prefilled) sequence.
  void add(Sequence* s);
  bool has_work() const { return !waiting_.empty() || !running_.empty() || !swapped_.empty(); }
  /// Plans one step and reserves its KV slots.
  SchedulerOutput schedule();
  /// Applies the step: advances num_computed, registers cached blocks, counts sampled tokens
  /// (`accepted[i]` tokens for seqs[i]; 1 without speculation), frees finished sequences.
  /// Returns the sequences that finished.
  std::vector<Sequence*> update(const SchedulerOutput& out, const std::vector<std::int64_t>& accepted);

  const std::deque<Sequence*>& waiting() const { return waiting_; }
  const std::vector<Sequence*>& running() const { return running_; }
  const std::deque<Sequence*>& swapped() const { return swapped_; }
  const SchedulerConfig& config() const { return cfg_; }
  std::int64_t num_preemptions() const { return preemptions_; }

 private:
  SchedulerOutput schedule_continuous();
  SchedulerOutput schedule_static();
  bool schedule_running(SchedulerOutput& out, std::int64_t& budget, bool decodes_only);
  void schedule_swapped(SchedulerOutput& out);
  void schedule_waiting(SchedulerOutput& out, std::int64_t& budget, bool whole_prompts);
  /// Preempts the lowest-priority running sequence; returns it.
  Sequence* preempt_one(SchedulerOutput& out);
  std::int64_t decode_tokens(const Sequence& s) const;
  /// KV slots `s` can ever hold: prompt + output (+ k speculative lookahead); a PD prefill
  /// sequence stops after its first token.
  std::int64_t lifetime_tokens(const Sequence& s) const;
  /// Blocks the running sequences may still take before they finish (admission "reserve").
  std::int64_t reserved_blocks() const;
  void enqueue_waiting(Sequence* s, bool front);
  bool before(const Sequence* a, const Sequence* b) const;

  SchedulerConfig cfg_;
  BlockManager& bm_;
  std::deque<Sequence*> waiting_;
  std::vector<Sequence*> running_;
  std::deque<Sequence*> swapped_;
  std::vector<Sequence*> static_batch_;  // static batching: admitted members, finished included
                                         // (PD prefill-only members leave at their first token)
  std::int64_t preemptions_ = 0;
};

}  // namespace infraplan::sim::serve
