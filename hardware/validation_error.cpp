#include "hardware/validation_error.hpp"

#include <cmath>
#include <cstdio>

namespace infraplan::hw {

std::string ValidationError::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "80%% of %d measured %s took %.2f-%.2fx the prediction (median %.2fx)", rows,
                what.c_str(), p10, p90, p50);
  std::string s = buf;
  if (held_out_rows > 0) {
    std::snprintf(buf, sizeof buf, "; inside on %d of %d held-out rows",
                  int(std::lround(held_out_coverage * held_out_rows)), held_out_rows);
    s += buf;
  }
  return s;
}

}  // namespace infraplan::hw
