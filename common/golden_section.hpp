#pragma once
// Golden-section search for the minimum of a unimodal function on [a, b]: deterministic (fixed
// bracket and iteration count), one evaluation per iteration.
#include <cmath>

namespace infraplan {

/// The midpoint of the bracket around f's minimum after `iterations` shrinks of [a, b].
template <class F>
double golden_section_min(F&& f, double a, double b, int iterations) {
  const double g = 0.5 * (std::sqrt(5.0) - 1);
  double c = b - g * (b - a), d = a + g * (b - a), fc = f(c), fd = f(d);
  for (int it = 0; it < iterations; ++it) {
    if (fc < fd)
      b = d, d = c, fd = fc, c = b - g * (b - a), fc = f(c);
    else
      a = c, c = d, fc = fd, d = a + g * (b - a), fd = f(d);
  }
  return 0.5 * (a + b);
}

}  // namespace infraplan
