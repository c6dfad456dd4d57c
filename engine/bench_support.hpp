#pragma once
// What `bench serve` needs besides the GPU, CUDA-free: the wall clock of a real-time run and
// the check that a scenario asks for something the CUDA backend runs (one replica on one GPU,
// bf16 or fp8 (W8A8) weights, bf16 or fp8 (E4M3) KV, continuous batching, preemption by recompute, no
// speculative decoding or PD disaggregation, 16-token blocks, requests within the model's length).
#include <chrono>

#include "engine/kv_format.hpp"
#include "engine/llama_config.hpp"
#include "engine/weight_format.hpp"
#include "simulator/serving_sim.hpp"

namespace infraplan::engine {

/// steady_clock since construction; waits sleep until ~1 ms before the target, then spin.
class SteadyRunClock final : public sim::serve::RunClock {
 public:
  SteadyRunClock() : t0_(std::chrono::steady_clock::now()) {}
  double now_s() const override;
  void wait_until(double t_s) override;
  /// Time 0 is now.
  void restart() { t0_ = std::chrono::steady_clock::now(); }
  /// Seconds spent inside wait_until since construction: the engine idle, waiting for arrivals.
  double waited_s() const { return waited_s_; }

 private:
  std::chrono::steady_clock::time_point t0_;
  double waited_s_ = 0;
};

/// Throws infraplan::Error naming the scenario field the CUDA backend cannot run, and the
/// request that does not fit `c.max_seq`.
void check_bench_supported(const sim::serve::ServingSetup& s, const LlamaConfig& c);

/// The engine's weight format for a scenario's serving.weights (bf16 or fp8); throws
/// infraplan::Error naming the field, the value and the valid choices for any other.
WeightFormat engine_weight_format(strat::WeightQuant q);

/// The engine's KV cache format for a scenario's serving.kv_dtype (bf16 or fp8); throws
/// infraplan::Error naming the field, the value and the valid choices for any other.
KvFormat engine_kv_format(Dtype d);

}  // namespace infraplan::engine
