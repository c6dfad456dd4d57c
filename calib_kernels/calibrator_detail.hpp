#pragma once
// Formatting and counting helpers shared by the calibrator's source files (calibrator.cpp and the
// table sweeps split from it); not part of the calibration API.
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infraplan::calib::calibrator_detail {
using json = nlohmann::ordered_json;

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

inline std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof b, f, a);
  return b;
}

/// Concatenates anything streamable (avoids GCC 12's false -Wrestrict on literal + std::string).
template <class... A>
inline std::string cat(const A&... a) {
  std::ostringstream o;
  (o << ... << a);
  return o.str();
}

inline std::string shape3(std::int64_t a, std::int64_t b, std::int64_t c) { return cat(a, "x", b, "x", c); }

inline std::vector<std::int64_t> pow2(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  return v;
}

inline double causal_flops(double batch, double heads, double s, double d, bool causal) {
  // QKᵀ and PV: 4·S·S·d per head, half of it under a causal mask (diagonal included: S(S+1)/2).
  double pairs = causal ? s * (s + 1) / 2 : s * s;
  return 4.0 * batch * heads * pairs * d;
}

}  // namespace infraplan::calib::calibrator_detail
