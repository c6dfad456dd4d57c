#include "hardware/spread_cost_model.hpp"

#include <algorithm>

namespace infraplan::hw {

bool SpreadBands::known() const {
  for (const auto* b : {&gemm, &attention, &memory, &host})
    if (*b && (*b)->low < (*b)->high) return true;
  return false;
}

std::optional<Profile::SpreadBand> SpreadBands::of(const std::string& kind) const {
  if (kind == "gemm") return gemm;
  if (kind == "attention") return attention;
  if (kind == "memory") return memory;
  if (kind == "host") return host;
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
  if (p.framework) {
    Profile::SpreadBand h;
    for (const auto& [key, runs] : p.framework->block_runs) {
      auto med = p.framework->block_us.find(key);
      if (med == p.framework->block_us.end() || runs.size() < 2) continue;
      for (const auto& [f, b] : runs) {
        if (med->second.first > 0) h.low = std::min(h.low, f / med->second.first - 1), h.high = std::max(h.high, f / med->second.first - 1);
        if (med->second.second > 0) h.low = std::min(h.low, b / med->second.second - 1), h.high = std::max(h.high, b / med->second.second - 1);
      }
      h.samples = std::max(h.samples, int(runs.size()));
    }
    if (h.samples >= 2 && h.low < h.high) s.host = h;
  }
  s.method = p.spread_method;
  return s;
}

double SpreadCostModel::host_time_factor() const {
  const double f = inner_.host_time_factor();
  if (!bands_.host) return f;
  return f * (1 + (edge_ == Edge::Low ? bands_.host->low : bands_.host->high));
}

CostEstimate SpreadCostModel::scaled(CostEstimate e, const std::optional<Profile::SpreadBand>& b) const {
  if (!b) return e;
  const double f = 1 + (edge_ == Edge::Low ? b->low : b->high);
  e.seconds *= f;
  if (f > 0) e.achieved /= f;
  return e;
}

}  // namespace infraplan::hw
