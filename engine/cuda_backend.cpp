#include "engine/cuda_backend.hpp"

#include <algorithm>
#include <stdexcept>

#include "simulator/sequence.hpp"

namespace infraplan::engine {

CudaBackend::CudaBackend(std::shared_ptr<CudaModel> model)
    : model_(std::move(model)), tokens_(model_->config().vocab) {}

sim::serve::StepCost CudaBackend::step(const sim::serve::BatchShape& b) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const double run_t0 = clock_ ? clock_->now_s() : 0.0;
  const std::int64_t graph_steps_before = model_->stats().graph_steps;
  if (b.padding_seqs > 0) throw std::logic_error("CudaBackend: static-batching padding is not supported");
  StepPlan plan = build_step_plan(b, tokens_, kBlockSize, model_->max_blocks_per_seq());
  const auto t1 = clock::now();
  const std::vector<std::int32_t>& out = model_->run(plan);
  const int vocab = model_->config().vocab;
  for (std::size_t i = 0; i < plan.sampled.size(); ++i) {
    const sim::serve::Sequence& s = *plan.sampled[i];
    if (observer_) {
      if (model_->logits().size() < (i + 1) * std::size_t(vocab))
        throw std::logic_error("CudaBackend: a logits observer needs a model built with keep_logits");
      observer_(s, s.len(), model_->logits().data() + i * std::size_t(vocab), out[i]);
    }
    tokens_.record(s, out[i]);
  }
  if (step_observer_) step_observer_(b, *model_);
  const auto t2 = clock::now();
  sim::serve::StepCost c;
  c.host_s = std::chrono::duration<double>(t1 - t0).count();
  c.total_s = std::chrono::duration<double>(t2 - t0).count();
  c.other_s = c.total_s - c.host_s;
  ++steps_;
  busy_s_ += c.total_s;
  if (timing_ && clock_) {
    // Host time of the step period: the engine's work since the previous step returned (its
    // waits for arrivals excluded) plus this step's wall time that the GPU did not account for.
    StepTiming t;
    t.start_s = run_t0;
    const double before = have_prev_ ? (run_t0 - prev_end_s_) - (clock_->waited_s() - prev_waited_s_) : 0.0;
    t.gpu_s = model_->last_gpu_seconds();
    t.host_s = std::max(0.0, before) + std::max(0.0, c.total_s - t.gpu_s);
    t.seqs = int(b.items.size());
    t.items = b.items;
    for (auto& it : t.items) {
      it.seq = nullptr;
      t.tokens += it.q_tokens;
      if (it.prefill) ++t.prefill_seqs;
    }
    t.graph = model_->stats().graph_steps > graph_steps_before;
    timing_->add(t);
    have_prev_ = true;
    prev_end_s_ = clock_->now_s();
    prev_waited_s_ = clock_->waited_s();
  }
  return c;
}

}  // namespace infraplan::engine
