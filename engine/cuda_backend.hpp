#pragma once
// CudaBackend: the ExecutionBackend that runs each engine step on a GPU. The scheduler, block
// manager and prefix cache are the simulator's own (simulator/serving_engine.hpp); this backend
// turns a scheduled batch into a StepPlan (token ids from its TokenStore, block tables from the
// sequences), runs it on its CudaModel, records the greedy tokens per sequence and returns the
// measured wall time of the step (plan building, upload, kernels, download) as its cost.
#include <chrono>
#include <functional>
#include <memory>

#include "engine/bench_support.hpp"
#include "engine/cuda_model.hpp"
#include "engine/step_timing.hpp"
#include "engine/token_store.hpp"
#include "simulator/execution_backend.hpp"

namespace infraplan::engine {

/// Called after a step for every sequence that sampled: the logits predicting its token at
/// `position` (= its length before the step) and the token chosen (tests).
using LogitsObserver = std::function<void(const sim::serve::Sequence& s, std::int64_t position,
                                          const float* logits, std::int32_t token)>;

/// Called after every step with its batch and the model that ran it (tests: e.g. the model's
/// fp8 activation scales of the step).
using StepObserver = std::function<void(const sim::serve::BatchShape& b, const CudaModel& m)>;

class CudaBackend final : public sim::serve::ExecutionBackend {
 public:
  /// The model is shared: a caller may keep it to read its statistics after the engine (which
  /// owns this backend) is gone.
  explicit CudaBackend(std::shared_ptr<CudaModel> model);
  sim::serve::StepCost step(const sim::serve::BatchShape& b) override;
  void forget(std::int64_t id) override { tokens_.forget(id); }

  CudaModel& model() { return *model_; }
  const TokenStore& tokens() const { return tokens_; }
  /// Needs the model built with keep_logits.
  void set_observer(LogitsObserver f) { observer_ = std::move(f); }
  void set_step_observer(StepObserver f) { step_observer_ = std::move(f); }
  /// Records every step's host and GPU time into `log`, on the run clock `clock` (whose waits
  /// for arrivals are not host time). Both outlive the backend.
  void set_timing(StepTimingLog* log, const SteadyRunClock* clock) {
    timing_ = log;
    clock_ = clock;
  }
  /// Steps run and their summed wall time, seconds.
  std::int64_t steps() const { return steps_; }
  double busy_s() const { return busy_s_; }

 private:
  std::shared_ptr<CudaModel> model_;
  TokenStore tokens_;
  LogitsObserver observer_;
  StepObserver step_observer_;
  std::int64_t steps_ = 0;
  double busy_s_ = 0;
  StepTimingLog* timing_ = nullptr;
  const SteadyRunClock* clock_ = nullptr;
  bool have_prev_ = false;
  double prev_end_s_ = 0, prev_waited_s_ = 0;
};

}  // namespace infraplan::engine
