#include "hardware/clocked_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/framework_costs.hpp"
#include "hardware/power_model.hpp"

namespace infraplan::hw {

double ClockedCostModel::factor(Dtype d) const {
  const double ref = inner_.reference_clock_mhz();
  if (!(ref > 0) || !(mhz_ > 0)) return 1.0;
  return std::pow(ref / mhz_, inner_.clock_exponent(d));
}

double ClockedCostModel::compute_share(const GemmShape& s, double ref_seconds) const {
  if (!(ref_seconds > 0)) return 1.0;
  const double in = dtype_bytes(s.dtype), out = s.dtype == Dtype::FP8 || s.dtype == Dtype::INT8 ? 2.0 : in;
  const double bytes =
      double(s.batch) * (double(s.m) * double(s.k) * in + double(s.k) * double(s.n) * in + double(s.m) * double(s.n) * out);
  const double t_bytes = inner_.memory_bound(bytes).seconds;
  return t_bytes > 0 ? std::clamp(ref_seconds / t_bytes - 1.0, 0.0, 1.0) : 1.0;
}

CostEstimate ClockedCostModel::gemm(const GemmShape& s) const {
  CostEstimate e = inner_.gemm(s);
  const double f = factor(s.dtype);
  if (f == 1.0) return e;
  const double phi = compute_share(s, e.seconds);
  return scaled(e, (1.0 - phi) + phi * f);
}

double ClockedCostModel::memory_clock_factor(double clock_share) const {
  const PowerModel* law = inner_.power_model();
  return eager_follow_ && law ? clock_share_factor(clock_share, law->max_clock_mhz(), mhz_) : 1.0;
}

CostEstimate ClockedCostModel::scaled(CostEstimate e, double f) {
  if (f == 1.0) return e;
  e.seconds *= f;
  if (e.achieved > 0) e.achieved /= f;
  return e;
}

}  // namespace infraplan::hw
