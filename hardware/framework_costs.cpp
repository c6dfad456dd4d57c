#include "hardware/framework_costs.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/calibrated_cost_model.hpp"

namespace infraplan::hw {

const Profile* profile_of(const CostModel& cost) { return cost.measured_profile(); }

namespace {

/// Bracketing indices and weight of log(x) on an ascending axis (clamped).
struct Bracket {
  std::size_t i0 = 0, i1 = 0;
  double w = 0;
};

Bracket bracket(const std::vector<double>& axis, double x) {
  Bracket b;
  if (axis.size() < 2 || x <= axis.front()) return b;
  if (x >= axis.back()) {
    b.i0 = b.i1 = axis.size() - 1;
    return b;
  }
  while (b.i0 + 2 < axis.size() && axis[b.i0 + 1] <= x) ++b.i0;
  b.i1 = b.i0 + 1;
  b.w = std::log(x / axis[b.i0]) / std::log(axis[b.i1] / axis[b.i0]);
  return b;
}

}  // namespace

std::optional<double> attention_backward_ratio(const Profile& p, const AttentionPrefillShape& s) {
  const PrefillTable* t = p.prefill_table(int(s.head_dim), s.kernel);
  if (!t || t->backward_seconds.empty()) return std::nullopt;
  const double b = double(s.batch) * double(s.heads) / double(t->heads);
  // Per seq_len row: the ratio along batch over the row's measured prefix.
  auto row_ratio = [&](std::size_t i) {
    std::size_t last = 0;
    while (last + 1 < t->batch.size() && std::isfinite(t->at(i, last + 1))) ++last;
    std::vector<double> ax(t->batch.begin(), t->batch.begin() + std::ptrdiff_t(last + 1));
    Bracket bb = bracket(ax, b);
    auto r = [&](std::size_t j) { return t->backward_at(i, j) / t->at(i, j); };
    return (1 - bb.w) * r(bb.i0) + bb.w * r(bb.i1);
  };
  Bracket bs = bracket(t->seq_len, double(s.q_len));
  return (1 - bs.w) * row_ratio(bs.i0) + bs.w * row_ratio(bs.i1);
}

std::optional<double> eager_op_seconds(const Profile& p, const std::string& op, double elements) {
  if (!p.framework) return std::nullopt;
  const auto& f = *p.framework;
  auto it = f.elementwise_seconds.find(op);
  if (it == f.elementwise_seconds.end()) return std::nullopt;
  std::vector<double> x, y;
  for (std::size_t i = 0; i < f.elementwise_elements.size(); ++i)
    if (std::isfinite(it->second[i]) && it->second[i] > 0)
      x.push_back(f.elementwise_elements[i]), y.push_back(it->second[i]);
  if (x.empty()) return std::nullopt;
  if (elements <= x.front()) return y.front();
  if (elements >= x.back()) return y.back() * elements / x.back();
  Bracket b = bracket(x, elements);
  return std::exp((1 - b.w) * std::log(y[b.i0]) + b.w * std::log(y[b.i1]));
}

double eager_op_clock_share(const Profile& p, const std::string& op) {
  if (!p.framework) return 0.0;
  const auto it = p.framework->clock_share.find(op);
  return it == p.framework->clock_share.end() ? 0.0 : it->second;
}

double memset_seconds_per_gemm(const Profile& p) {
  if (!p.framework || !p.framework->memsets) return 0.0;
  return p.framework->memsets->per_gemm * p.framework->memsets->seconds;
}

double clock_share_factor(double clock_share, double top_mhz, double mhz) {
  if (!(top_mhz > 0) || !(mhz > 0) || mhz >= top_mhz) return 1.0;
  const double phi = std::clamp(clock_share, 0.0, 1.0);
  return (1.0 - phi) + phi * top_mhz / mhz;
}

std::optional<std::pair<double, double>> module_host_us(const Profile& p, const std::string& kind) {
  if (!p.framework) return std::nullopt;
  auto it = p.framework->module_us.find(kind);
  if (it == p.framework->module_us.end()) return std::nullopt;
  return it->second;
}

}  // namespace infraplan::hw
