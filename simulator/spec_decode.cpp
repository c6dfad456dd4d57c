#include "simulator/spec_decode.hpp"

#include <cmath>

#include "model/model_math.hpp"

namespace infraplan::sim::serve {

const char* spec_method_name(SpecMethod m) {
  switch (m) {
    case SpecMethod::None:
      return "none";
    case SpecMethod::Draft:
      return "draft";
    case SpecMethod::Eagle:
      return "eagle";
    case SpecMethod::Ngram:
      return "ngram";
  }
  return "?";
}

double expected_tokens_per_step(double a, int k) {
  if (a >= 1.0) return double(k + 1);
  if (a <= 0.0) return 1.0;
  return (1.0 - std::pow(a, double(k + 1))) / (1.0 - a);
}

std::int64_t sample_accepted_tokens(Rng& rng, double alpha, std::int64_t k) {
  std::int64_t n = 1;
  while (n <= k && rng.uniform() < alpha) ++n;
  return n;
}

std::optional<model::ModelSpec> proposer_model(const SpecConfig& c, const model::ModelSpec& target) {
  if (c.method == SpecMethod::Draft && c.draft_model) return *c.draft_model;
  if (c.method == SpecMethod::Eagle) {
    model::ModelSpec e = target;  // one decoder layer at the target's width, fed its hidden states
    e.name = target.name + "-eagle-head";
    e.layers = 1;
    e.moe = {};
    if (e.ffn_hidden == 0) e.ffn_hidden = 4 * e.hidden;
    return e;
  }
  return std::nullopt;
}

double proposer_weight_bytes(const SpecConfig& c, const model::ModelSpec& target) {
  if (!c.enabled()) return 0;
  const auto d = proposer_model(c, target);
  if (!d) return 0;
  double w = model::count_params(*d).total * 2.0;
  if (c.method == SpecMethod::Eagle) w -= model::count_params(*d).embedding * 2.0;  // shares the target's
  return w;
}

SpecProposer::SpecProposer(const SpecConfig& c, const model::ModelSpec& target,
                           const strat::ServingConfig& serving, const hw::CostModel& cm)
    : c_(c) {
  draft_serving_ = serving;
  draft_serving_.tp = 1;
  draft_serving_.pp = 1;
  draft_serving_.ep = 1;
  draft_serving_.weights = strat::WeightQuant::BF16;
  draft_ = proposer_model(c_, target);
  if (draft_) {
    backend_ = std::make_unique<SimulatedBackend>(*draft_, draft_serving_, cm, nullptr,
                                                  BackendOptions::without_host());
    weight_bytes_ = proposer_weight_bytes(c_, target);
  }
}

double SpecProposer::propose_seconds(const BatchShape& b) {
  if (!c_.enabled()) return 0;
  std::int64_t decodes = 0;
  for (const auto& it : b.items) decodes += it.prefill ? 0 : 1;
  if (c_.method == SpecMethod::Ngram) return double(decodes) * c_.ngram_host_us_per_seq * 1e-6;
  if (!backend_) return 0;
  double t = 0;
  BatchShape first;  // the draft also prefills new prompts
  BatchShape dec;
  for (const auto& it : b.items) {
    if (it.prefill)
      first.items.push_back({it.q_tokens, it.context, true, false});
    else
      dec.items.push_back({1, it.context, false, true});
  }
  if (!first.items.empty()) t += backend_->step(first).total_s;
  for (int i = 0; i < c_.k && !dec.items.empty(); ++i) {
    t += backend_->step(dec).total_s;
    for (auto& it : dec.items) ++it.context;
  }
  return t;
}

}  // namespace infraplan::sim::serve
