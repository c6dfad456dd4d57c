#include "simulator/scheduler.hpp"

#include <algorithm>
#include <cassert>

namespace infraplan::sim::serve {

const char* admission_name(Admission a) { return a == Admission::Reserve ? "reserve" : "on_demand"; }

Scheduler::Scheduler(const SchedulerConfig& cfg, BlockManager& bm) : cfg_(cfg), bm_(bm) {}

std::int64_t Scheduler::lifetime_tokens(const Sequence& s) const {
  if (s.prefill_only) return s.prompt_tokens() + 1;
  return s.prompt_tokens() + s.request().output_tokens + cfg_.spec_tokens;
}

std::int64_t Scheduler::reserved_blocks() const {
  std::int64_t r = 0;
  for (const Sequence* s : running_)
    r += std::max<std::int64_t>(0, s->blocks_for(lifetime_tokens(*s)) - std::int64_t(s->block_table.size()));
  return r;
}

bool Scheduler::before(const Sequence* a, const Sequence* b) const {
  const Request &ra = a->request(), &rb = b->request();
  if (cfg_.policy == Policy::Priority && ra.priority != rb.priority) return ra.priority < rb.priority;
  if (ra.arrival_s != rb.arrival_s) return ra.arrival_s < rb.arrival_s;
  return ra.id < rb.id;
}

void Scheduler::enqueue_waiting(Sequence* s, bool front) {
  s->status = SeqStatus::Waiting;
  if (cfg_.policy == Policy::FCFS) {
    if (front)
      waiting_.push_front(s);
    else
      waiting_.push_back(s);
    return;
  }
  auto it = std::upper_bound(waiting_.begin(), waiting_.end(), s,
                             [this](const Sequence* a, const Sequence* b) { return before(a, b); });
  waiting_.insert(it, s);
}

void Scheduler::add(Sequence* s) { enqueue_waiting(s, false); }

std::int64_t Scheduler::decode_tokens(const Sequence& s) const {
  const std::int64_t k =
      std::min<std::int64_t>(cfg_.spec_tokens, std::max<std::int64_t>(s.remaining_output() - 1, 0));
  return 1 + k;
}

SchedulerOutput Scheduler::schedule() {
  return cfg_.batching == Batching::Static ? schedule_static() : schedule_continuous();
}

SchedulerOutput Scheduler::schedule_continuous() {
  SchedulerOutput out;
  out.seqs.reserve(running_.size() + 16);
  std::int64_t budget = cfg_.max_batched_tokens;
  if (cfg_.chunked_prefill) {
    schedule_running(out, budget, false);
    if (out.preempted.empty()) schedule_swapped(out);
    if (out.preempted.empty() && swapped_.empty()) schedule_waiting(out, budget, false);
    return out;
  }
  if (swapped_.empty() && !waiting_.empty()) {
    schedule_waiting(out, budget, true);
    if (!out.empty()) return out;  // prefill step: running decodes wait
  }
  schedule_running(out, budget, true);
  if (out.preempted.empty()) schedule_swapped(out);
  return out;
}

Sequence* Scheduler::preempt_one(SchedulerOutput& out) {
  // Victim: the least urgent not-yet-scheduled running sequence (FCFS: the latest admitted).
  std::size_t first = 0;
  for (const auto& e : out.seqs)
    if (e.seq->status == SeqStatus::Running) ++first;  // scheduled ones sit at the front of running_
  assert(first < running_.size());
  std::size_t v = running_.size() - 1;
  if (cfg_.policy == Policy::Priority)
    for (std::size_t i = first; i < running_.size(); ++i)
      if (before(running_[v], running_[i])) v = i;
  Sequence* s = running_[v];
  running_.erase(running_.begin() + std::ptrdiff_t(v));
  ++preemptions_;
  ++s->num_preemptions;
  if (cfg_.preemption == Preemption::Swap && bm_.can_swap_out(*s)) {
    out.swapped_out_blocks += bm_.swap_out(*s);
    s->status = SeqStatus::Swapped;
    swapped_.push_back(s);
  } else {
    bm_.register_computed(*s, true);  // its own blocks stay findable for the recompute
    bm_.free(*s);
    s->num_computed = 0;  // recompute prompt + generated tokens later
    s->kv_remote = false;
    enqueue_waiting(s, true);
  }
  out.preempted.push_back(s);
  return s;
}

bool Scheduler::schedule_running(SchedulerOutput& out, std::int64_t& budget, bool decodes_only) {
  std::size_t i = 0;
  while (i < running_.size() && budget > 0) {
    Sequence* s = running_[i];
    const bool prefill = s->in_prefill();
    std::int64_t q;
    if (prefill) {
      if (decodes_only) {
        ++i;
        continue;
      }
      q = std::min(s->tokens_to_compute(), budget);
      if (cfg_.chunk_tokens > 0) q = std::min(q, cfg_.chunk_tokens);
    } else {
      q = decode_tokens(*s);
      if (q > budget) break;
    }
    bool self = false;
    while (!bm_.can_append(*s, q)) {
      if (preempt_one(out) == s) {
        self = true;
        break;
      }
    }
    if (self) continue;  // running_[i] is now the next sequence
    // Sequences scheduled so far stay at the front of running_: move s to position i.
    bm_.append(*s, q);
    out.seqs.push_back({s, q, s->num_computed + q, prefill, s->num_computed + q >= s->len()});
    out.num_tokens += q;
    if (prefill) out.num_prefill_tokens += q;
    budget -= q;
    ++i;
  }
  return true;
}

void Scheduler::schedule_swapped(SchedulerOutput& out) {
  while (!swapped_.empty() && int(running_.size()) < cfg_.max_num_seqs &&
         bm_.can_swap_in(*swapped_.front())) {
    Sequence* s = swapped_.front();
    swapped_.pop_front();
    out.swapped_in_blocks += bm_.swap_in(*s);
    s->status = SeqStatus::Running;
    running_.push_back(s);  // computes from the next step
  }
}

void Scheduler::schedule_waiting(SchedulerOutput& out, std::int64_t& budget, bool whole_prompts) {
  const bool reserve = cfg_.admission == Admission::Reserve;
  std::int64_t reserved = reserve && !waiting_.empty() ? reserved_blocks() : 0;
  while (!waiting_.empty() && int(running_.size()) < cfg_.max_num_seqs && budget > 0) {
    Sequence* s = waiting_.front();
    PrefixMatch m;
    if (s->kv_remote)
      m.tokens = s->num_computed;  // KV arrived from a prefill instance
    else
      m = bm_.match_prefix(*s);
    std::int64_t q = s->len() - m.tokens;
    if (whole_prompts) {
      if (q > budget && !out.empty()) break;  // a lone prompt larger than the budget still runs
    } else {
      q = std::min(q, budget);
      if (cfg_.chunk_tokens > 0) q = std::min(q, cfg_.chunk_tokens);
    }
    if (!bm_.can_allocate(*s, m, m.tokens + q)) break;
    // Reserve: the blocks of its whole lifetime must fit beside what the running ones may take.
    if (reserve && !bm_.can_allocate(*s, m, lifetime_tokens(*s), reserved)) break;
    waiting_.pop_front();
    bm_.allocate(*s, m, m.tokens + q);
    if (reserve)
      reserved +=
          std::max<std::int64_t>(0, s->blocks_for(lifetime_tokens(*s)) - std::int64_t(s->block_table.size()));
    s->status = SeqStatus::Running;
    running_.push_back(s);
    const bool prefill = s->in_prefill();
    out.seqs.push_back({s, q, s->num_computed + q, prefill, s->num_computed + q >= s->len()});
    out.num_tokens += q;
    if (prefill) out.num_prefill_tokens += q;
    budget -= q;
  }
}

SchedulerOutput Scheduler::schedule_static() {
  SchedulerOutput out;
  const bool batch_done = std::all_of(static_batch_.begin(), static_batch_.end(),
                                      [](const Sequence* s) { return s->status == SeqStatus::Finished; });
  if (batch_done) {
    for (Sequence* s : static_batch_) bm_.free(*s);
    static_batch_.clear();
    while (!waiting_.empty() && int(static_batch_.size()) < cfg_.max_num_seqs) {
      Sequence* s = waiting_.front();
      PrefixMatch m;  // no prefix cache in static batches; a PD decode instance's KV arrived computed
      if (s->kv_remote) m.tokens = s->num_computed;
      const std::int64_t slots = s->prompt_tokens() + s->request().output_tokens;  // reserved up front
      if (!bm_.can_allocate(*s, m, slots)) break;
      waiting_.pop_front();
      bm_.allocate(*s, m, slots);
      s->status = SeqStatus::Running;
      running_.push_back(s);
      static_batch_.push_back(s);
      const std::int64_t q = s->len() - s->num_computed;
      const bool prefill = s->in_prefill();
      out.seqs.push_back({s, q, s->num_computed + q, prefill, true});
      out.num_tokens += q;
      if (prefill) out.num_prefill_tokens += q;
    }
    return out;
  }
  for (Sequence* s : static_batch_) {
    if (s->status == SeqStatus::Finished) {
      ++out.padding_seqs;
      out.padding_context += s->len();
      continue;
    }
    out.seqs.push_back({s, 1, s->num_computed + 1, false, true});
    out.num_tokens += 1;
  }
  return out;
}

std::vector<Sequence*> Scheduler::update(const SchedulerOutput& out,
                                         const std::vector<std::int64_t>& accepted) {
  std::vector<Sequence*> finished;
  for (std::size_t i = 0; i < out.seqs.size(); ++i) {
    const ScheduledSeq& e = out.seqs[i];
    Sequence* s = e.seq;
    if (s->status != SeqStatus::Running) continue;
    if (e.samples) {
      std::int64_t a = i < accepted.size() ? accepted[i] : 1;
      a = std::clamp<std::int64_t>(a, 1, s->remaining_output());
      s->num_computed = s->len() + a - 1;
      s->num_generated += a;
    } else {
      s->num_computed += e.q_tokens;
    }
    bm_.register_computed(*s);
    if (s->done() || (s->prefill_only && s->num_generated >= 1)) {
      s->status = SeqStatus::Finished;
      running_.erase(std::find(running_.begin(), running_.end(), s));
      // Static batches keep finished members' KV until the batch ends. PD prefill instances keep
      // it until the transfer to the decode instance is done, and then the engine frees it: such
      // a sequence leaves its static batch here, so that exactly one owner frees its blocks.
      if (s->prefill_only) {
        if (cfg_.batching == Batching::Static) static_batch_.erase(std::find(static_batch_.begin(), static_batch_.end(), s));
      } else if (cfg_.batching != Batching::Static) {
        bm_.free(*s);
      }
      finished.push_back(s);
    }
  }
  return finished;
}

}  // namespace infraplan::sim::serve
