#include "hardware/clocked_cost_model.hpp"

#include <cmath>

namespace infraplan::hw {

double ClockedCostModel::factor(Dtype d) const {
  const double ref = inner_.reference_clock_mhz();
  if (!(ref > 0) || !(mhz_ > 0)) return 1.0;
  return std::pow(ref / mhz_, inner_.clock_exponent(d));
}

CostEstimate ClockedCostModel::scaled(CostEstimate e, double f) {
  if (f == 1.0) return e;
  e.seconds *= f;
  if (e.achieved > 0) e.achieved /= f;
  return e;
}

}  // namespace infraplan::hw
