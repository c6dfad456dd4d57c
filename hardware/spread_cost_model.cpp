#include "hardware/spread_cost_model.hpp"

namespace infraplan::hw {

bool SpreadBands::known() const {
  for (const auto* b : {&gemm, &attention, &memory})
    if (*b && (*b)->low < (*b)->high) return true;
  return false;
}

std::optional<Profile::SpreadBand> SpreadBands::of(const std::string& kind) const {
  if (kind == "gemm") return gemm;
  if (kind == "attention") return attention;
  if (kind == "memory") return memory;
  return std::nullopt;
}

std::optional<std::pair<double, double>> SpreadBands::range(const std::string& kind, double seconds) const {
  auto b = of(kind);
  if (!b) return std::nullopt;
  return std::make_pair(seconds * (1 + b->low), seconds * (1 + b->high));
}

SpreadBands spread_bands(const Profile& p) {
  SpreadBands s;
  auto get = [&](const char* kind) -> std::optional<Profile::SpreadBand> {
    auto it = p.spread.find(kind);
    if (it == p.spread.end()) return std::nullopt;
    return it->second;
  };
  s.gemm = get("gemm");
  s.attention = get("attention");
  s.memory = get("memory");
  s.method = p.spread_method;
  return s;
}

CostEstimate SpreadCostModel::scaled(CostEstimate e, const std::optional<Profile::SpreadBand>& b) const {
  if (!b) return e;
  const double f = 1 + (edge_ == Edge::Low ? b->low : b->high);
  e.seconds *= f;
  if (f > 0) e.achieved /= f;
  return e;
}

}  // namespace infraplan::hw
