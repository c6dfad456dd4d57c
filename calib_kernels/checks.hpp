#pragma once
// Correctness checks of every calibration kernel against a CPU reference in double precision,
// on fresh random inputs over odd and even sizes. Used by the GoogleTest suite and by
// `infraplan-calibrate --check`.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace infraplan::calib {

struct CheckResult {
  std::string name;
  bool ok = false;
  double max_rel_err = 0;  ///< worst ‖out − ref‖ / ‖ref‖ over the sizes tried (0 for exact checks)
  double tolerance = 0;
  std::string detail;  ///< the sizes tried, or the first failing one
};

struct NamedCheck {
  std::string name;
  std::function<CheckResult(std::uint64_t seed)> run;
};

/// All checks, in a fixed order.
const std::vector<NamedCheck>& all_checks();

}  // namespace infraplan::calib
