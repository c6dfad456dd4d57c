#pragma once
// Speculative decoding: a cheap proposer guesses k tokens, the target model verifies them in one
// step (k + 1 query tokens per sequence), and tokens are accepted up to the first rejection plus
// one token sampled by the target. With per-token acceptance α the expected tokens per step are
// (1 − α^(k+1)) / (1 − α). Proposers: a draft model (a second ModelSpec run for k sequential
// decode steps), an EAGLE-style head (one extra decoder layer at the target's width), or n-gram
// lookup in the prompt and output (host time only).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "model/model_spec.hpp"
#include "simulator/execution_backend.hpp"
#include "simulator/serving_random.hpp"

namespace infraplan::sim::serve {

enum class SpecMethod { None, Draft, Eagle, Ngram };
const char* spec_method_name(SpecMethod m);

struct SpecConfig {
  SpecMethod method = SpecMethod::None;
  int k = 4;                                    ///< draft tokens per step
  double acceptance = 0.7;                      ///< per-token acceptance α (requests may override)
  std::optional<model::ModelSpec> draft_model;  ///< method = draft
  double ngram_host_us_per_seq = 3;             ///< n-gram lookup cost per sequence per step, µs
  bool enabled() const { return method != SpecMethod::None && k > 0; }
};

/// Expected tokens produced per verify step: (1 − α^(k+1)) / (1 − α) (k + 1 when α = 1).
double expected_tokens_per_step(double alpha, int k);
/// Tokens produced by one verify step: 1 + the number of leading drafts accepted (each with
/// probability α), at most k + 1.
std::int64_t sample_accepted_tokens(Rng& rng, double alpha, std::int64_t k);

/// The model a proposer runs: the draft model, or an EAGLE-style head (one decoder layer at the
/// target's width); none for n-gram lookup.
std::optional<model::ModelSpec> proposer_model(const SpecConfig& c, const model::ModelSpec& target);
/// Proposer weights on the GPU (bf16; an EAGLE head shares the target's embedding), bytes.
double proposer_weight_bytes(const SpecConfig& c, const model::ModelSpec& target);

/// GPU time of the proposer for one step.
class SpecProposer {
 public:
  /// `target` and `serving` describe the verified model; the draft runs on one GPU of the replica.
  SpecProposer(const SpecConfig& c, const model::ModelSpec& target, const strat::ServingConfig& serving,
               const hw::CostModel& cm);
  /// Seconds to propose k tokens for the decode items of `b` (and to prefill the draft's KV for
  /// its prefill items).
  double propose_seconds(const BatchShape& b);
  /// Draft weights on the GPU, bytes (0 for n-gram).
  double weight_bytes() const { return weight_bytes_; }
  const SpecConfig& config() const { return c_; }

 private:
  SpecConfig c_;
  strat::ServingConfig draft_serving_;
  std::optional<model::ModelSpec> draft_;
  std::unique_ptr<SimulatedBackend> backend_;
  double weight_bytes_ = 0;
};

}  // namespace infraplan::sim::serve
