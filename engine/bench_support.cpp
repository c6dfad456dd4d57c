#include "engine/bench_support.hpp"

#include <thread>

#include "common/error.hpp"

namespace infraplan::engine {

double SteadyRunClock::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void SteadyRunClock::wait_until(double t_s) {
  const double entry = now_s();
  for (;;) {
    const double now = now_s();
    const double left = t_s - now;
    if (left <= 0) {
      waited_s_ += now - entry;
      return;
    }
    if (left > 1.5e-3) std::this_thread::sleep_for(std::chrono::duration<double>(left - 1e-3));
  }
}

WeightFormat engine_weight_format(strat::WeightQuant q) {
  if (q == strat::WeightQuant::BF16) return WeightFormat::BF16;
  if (q == strat::WeightQuant::FP8) return WeightFormat::FP8;
  throw Error(std::string("bench serve: serving.weights=") + strat::weight_quant_name(q) +
              " is not supported by the CUDA backend; valid: bf16, fp8 (W8A8: E4M3 weights and activations, "
              "per-tensor scales)");
}

KvFormat engine_kv_format(Dtype d) {
  if (d == Dtype::BF16) return KvFormat::BF16;
  if (d == Dtype::FP8) return KvFormat::FP8;
  throw Error(std::string("bench serve: serving.kv_dtype=") + std::string(dtype_name(d)) +
              " is not supported by the CUDA backend; valid: bf16, fp8 (E4M3, per-layer key and value scales)");
}

void check_bench_supported(const sim::serve::ServingSetup& s, const LlamaConfig& c) {
  const auto& sv = s.serving;
  const auto& e = s.engine;
  auto refuse = [](const std::string& field, const std::string& value, const std::string& need) {
    throw Error("bench serve: " + field + "=" + value + " is not supported by the CUDA backend; " + need);
  };
  if (e.pd.enabled) refuse("serving.disaggregation", "enabled", "remove it (one aggregated replica)");
  if (sv.replicas != 1)
    refuse("serving.replicas", std::to_string(sv.replicas), "bench serve runs 1 replica on 1 GPU");
  if (sv.tp != 1)
    refuse("serving.tp", std::to_string(sv.tp),
           "tensor parallelism over NCCL is designed (docs/serving.md) but not implemented; use tp=1");
  if (sv.pp != 1) refuse("serving.pp", std::to_string(sv.pp), "use pp=1");
  (void)engine_weight_format(sv.weights);
  (void)engine_kv_format(sv.kv_dtype);
  if (sv.block_size != 16) refuse("serving.block_size", std::to_string(sv.block_size), "the kernels use 16");
  if (e.spec.enabled())
    refuse("serving.speculative.method", "set", "speculative decoding is not implemented");
  if (e.sched.batching != sim::serve::Batching::Continuous)
    refuse("serving.batching", "static", "use continuous batching");
  if (e.sched.preemption != sim::serve::Preemption::Recompute)
    refuse("serving.preemption", "swap", "use recompute");
  const auto reqs = s.requests.empty() ? sim::serve::make_requests(s.workload) : s.requests;
  for (const auto& r : reqs)
    if (r.prompt_tokens + r.output_tokens > c.max_seq)
      throw Error("bench serve: request " + std::to_string(r.id) + " has " +
                  std::to_string(r.prompt_tokens + r.output_tokens) +
                  " tokens (prompt + output) but model '" + c.name + "' runs at most " +
                  std::to_string(c.max_seq) + " (max_seq)");
}

}  // namespace infraplan::engine
