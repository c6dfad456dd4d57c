#pragma once
// Interpolation in log space over ascending axes, as the cost model's measured tables use it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace infraplan::hw {

/// Where x falls on an ascending axis, in log space.
struct Pos {
  std::size_t i0 = 0, i1 = 0;
  double w = 0;        ///< weight of i1
  bool inside = true;  ///< x within [front, back]
  double clamped = 0;  ///< x clamped into the axis range
};

inline Pos locate(const std::vector<double>& a, double x) {
  Pos p;
  const double eps = 1e-9;
  p.inside = x >= a.front() * (1 - eps) && x <= a.back() * (1 + eps);
  p.clamped = std::clamp(x, a.front(), a.back());
  if (a.size() == 1) return p;
  auto it = std::upper_bound(a.begin(), a.end(), p.clamped);
  p.i1 = std::clamp<std::size_t>(std::size_t(it - a.begin()), 1, a.size() - 1);
  p.i0 = p.i1 - 1;
  p.w = (std::log(p.clamped) - std::log(a[p.i0])) / (std::log(a[p.i1]) - std::log(a[p.i0]));
  p.w = std::clamp(p.w, 0.0, 1.0);
  return p;
}

/// exp((1 − w) log a + w log b), exact at w = 0 and 1.
inline double lerp_log(double a, double b, double w) {
  if (w == 0) return a;
  if (w == 1) return b;
  return std::exp((1 - w) * std::log(a) + w * std::log(b));
}

}  // namespace infraplan::hw
