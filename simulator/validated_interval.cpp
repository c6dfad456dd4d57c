#include "simulator/validated_interval.hpp"

namespace infraplan::sim {

std::optional<ValidatedInterval> training_interval(const CostSetup& cs, double iteration_time_s,
                                                   bool sustained_clock) {
  const auto it = cs.validation_error.find("training_step");
  if (sustained_clock || it == cs.validation_error.end()) return std::nullopt;
  return ValidatedInterval{it->second.interval(iteration_time_s), it->second.summary()};
}

std::optional<ServingInterval> serving_interval(const CostSetup& cs, const serve::ServingSetup& setup,
                                                const serve::ServingMetrics& m, bool power_limited) {
  const bool limiter_default = cs.cost && cs.cost->has_power_limiter();
  if (setup.engine.engine.name != "infraplan" || power_limited != limiter_default) return std::nullopt;
  ServingInterval out;
  out.metrics = Json::object();
  auto add = [&](const char* kind, const char* key, const char* label, double p50,
                 std::optional<std::pair<double, double>>& slot) {
    const auto it = cs.validation_error.find(kind);
    if (it == cs.validation_error.end()) return;
    slot = it->second.interval(p50);
    out.metrics[key] = {{"p50", {slot->first, slot->second}}};
    out.note += std::string(out.note.empty() ? "" : ". ") + label + ": " + it->second.summary();
  };
  add("serving_ttft", "ttft_interval_ms", "TTFT", m.ttft_ms.p50, out.ttft_ms);
  add("serving_tpot", "tpot_interval_ms", "TPOT", m.tpot_ms.p50, out.tpot_ms);
  if (out.note.empty()) return std::nullopt;
  return out;
}

}  // namespace infraplan::sim
