#include "simulator/serving_engine.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/error.hpp"

namespace infraplan::sim::serve {

const char* role_name(Role r) {
  switch (r) {
    case Role::Aggregated:
      return "replica";
    case Role::Prefill:
      return "prefill";
    case Role::Decode:
      return "decode";
  }
  return "?";
}

static SchedulerConfig role_config(SchedulerConfig c, Role r) {
  if (r == Role::Prefill) c.spec_tokens = 0;  // a prefill instance never decodes
  return c;
}

ServingEngine::ServingEngine(int index, const InstanceSpec& spec, const EngineOptions& o,
                             std::unique_ptr<ExecutionBackend> backend, SpecProposer* spec_proposer, Rng rng)
    : index_(index),
      spec_(spec),
      o_(o),
      bm_(spec.num_blocks, spec.block_size, o.prefix_cache && spec.role != Role::Decode, o.watermark,
          spec.host_blocks),
      sched_(role_config(o.sched, spec.role), bm_),
      backend_(std::move(backend)),
      spec_proposer_(spec.role == Role::Prefill ? nullptr : spec_proposer),
      rng_(rng) {}

void ServingEngine::check_fits(const Request& r) const {
  // A request that cannot fit alone (watermark and speculative lookahead included) would wait
  // forever: refuse it up front, as a real engine refuses prompts beyond its KV capacity.
  const std::int64_t tokens =
      r.prompt_tokens + (spec_.role == Role::Prefill ? 1 : r.output_tokens) + o_.sched.spec_tokens;
  const std::int64_t need = (tokens + spec_.block_size - 1) / spec_.block_size;
  const std::int64_t usable = spec_.num_blocks - std::int64_t(o_.watermark * double(spec_.num_blocks));
  if (need > usable)
    throw Error("request " + std::to_string(r.id) + " needs " + std::to_string(tokens) +
                " tokens of KV but a " + role_name(spec_.role) + " instance can admit " +
                std::to_string(usable * spec_.block_size) +
                " tokens; raise serving.tp, quantize the KV cache or shorten the workload");
}

void ServingEngine::add(const Request& r) {
  check_fits(r);
  auto s = std::make_unique<Sequence>(r, spec_.block_size);
  s->prefill_only = spec_.role == Role::Prefill;
  Sequence* p = s.get();
  seqs_.emplace(r.id, std::move(s));
  sched_.add(p);
}

void ServingEngine::add_prefilled(const Request& r, double first_token_s) {
  check_fits(r);
  auto s = std::make_unique<Sequence>(r, spec_.block_size);
  s->kv_remote = true;
  s->num_generated = 1;
  s->num_computed = r.prompt_tokens;
  s->first_token_s = s->last_token_s = first_token_s;
  Sequence* p = s.get();
  seqs_.emplace(r.id, std::move(s));
  sched_.add(p);
}

std::optional<StepInfo> ServingEngine::start_step(double now) {
  if (busy_ || !sched_.has_work()) return std::nullopt;
  current_ = sched_.schedule();
  if (!zombies_.empty()) {
    std::vector<std::int64_t> keep;
    for (auto id : zombies_) {
      if (seqs_.at(id)->block_table.empty())
        seqs_.erase(id);
      else
        keep.push_back(id);
    }
    zombies_.swap(keep);
  }
  if (current_.empty() && current_.swapped_in_blocks == 0 && current_.swapped_out_blocks == 0)
    return std::nullopt;
  shape_.items.clear();
  shape_.padding_seqs = current_.padding_seqs;
  shape_.padding_context = current_.padding_context;
  shape_.block_copies = bm_.take_block_copies();
  shape_.start_s = now;
  for (const auto& e : current_.seqs) {
    shape_.items.push_back({e.q_tokens, e.context, e.prefill, e.samples, e.seq});
    if (e.seq->first_scheduled_s < 0) e.seq->first_scheduled_s = now;
  }
  StepInfo info;
  if (!current_.empty()) {
    const StepCost c = backend_->step(shape_);
    info.duration_s = c.total_s;
    info.cost = c;
    if (spec_proposer_) info.duration_s += spec_proposer_->propose_seconds(shape_);
  }
  const double swap_bytes =
      double(current_.swapped_in_blocks + current_.swapped_out_blocks) * spec_.block_bytes_per_gpu;
  info.swap_s = swap_bytes / (spec_.pcie_GBps * 1e9);
  info.duration_s += info.swap_s;
  info.tokens = current_.num_tokens;
  info.prefill_tokens = current_.num_prefill_tokens;
  info.seqs = std::int64_t(current_.seqs.size());
  info.padding_seqs = current_.padding_seqs;
  busy_ = true;
  step_start_ = now;
  return info;
}

std::vector<Sequence*> ServingEngine::finish_step(double now, LogHistogram& itl) {
  if (!busy_) throw std::logic_error("ServingEngine::finish_step without a running step");
  busy_ = false;
  busy_s += now - step_start_;
  ++steps;
  tokens += current_.num_tokens;
  padding_tokens += current_.padding_seqs;
  std::vector<std::int64_t> accepted(current_.seqs.size(), 1);
  for (std::size_t i = 0; i < current_.seqs.size(); ++i) {
    const auto& e = current_.seqs[i];
    if (!e.prefill && e.samples && e.q_tokens > 1) {
      const double a = e.seq->request().acceptance >= 0 ? e.seq->request().acceptance : o_.spec.acceptance;
      accepted[i] = sample_accepted_tokens(rng_, a, e.q_tokens - 1);
    }
  }
  std::vector<std::int64_t> before(current_.seqs.size());
  for (std::size_t i = 0; i < current_.seqs.size(); ++i) before[i] = current_.seqs[i].seq->num_generated;
  auto finished = sched_.update(current_, accepted);
  for (std::size_t i = 0; i < current_.seqs.size(); ++i) {
    Sequence* s = current_.seqs[i].seq;
    const std::int64_t produced = s->num_generated - before[i];
    if (produced <= 0) continue;
    if (s->first_token_s < 0) {
      s->first_token_s = now;
    } else {
      const double gap = now - s->last_token_s;
      itl.add(gap / double(produced), produced);
      s->max_itl_s = std::max(s->max_itl_s, gap);
    }
    s->last_token_s = now;
  }
  return finished;
}

void ServingEngine::release(std::int64_t id) {
  auto it = seqs_.find(id);
  if (it == seqs_.end()) throw std::logic_error("ServingEngine::release: unknown sequence");
  bm_.free(*it->second);
  seqs_.erase(it);
  backend_->forget(id);
}

void ServingEngine::forget(std::int64_t id) {
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return;
  backend_->forget(id);
  if (!it->second->block_table.empty())
    zombies_.push_back(id);  // a static batch still holds its KV
  else
    seqs_.erase(it);
}

std::int64_t ServingEngine::cached_blocks(const Request& r) const {
  if (!bm_.prefix_caching()) return 0;
  Sequence probe(r, spec_.block_size);
  return std::int64_t(bm_.match_prefix(probe).blocks.size());
}

void ServingEngine::check_invariants() const {
  std::vector<const Sequence*> live;
  for (const auto& [id, s] : seqs_)
    if (!s->block_table.empty()) live.push_back(s.get());
  bm_.check_live_blocks(live);
  // The whole scan (free list, LRU, cache map over every block) at least every 64 blocks' worth of
  // checks: O(64) per check amortised instead of O(num_blocks).
  const std::int64_t period = std::max<std::int64_t>(1, bm_.num_blocks() / 64);
  if (invariant_checks_++ % period == 0) bm_.check_invariants(live);
}

}  // namespace infraplan::sim::serve
