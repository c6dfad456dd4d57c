#pragma once
// A small deterministic generator for the calibration's random shapes and shuffled orders: the
// same numbers on every standard library (std::*_distribution differ between them).
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace infraplan::calib {

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 33;
  }
  double uniform() { return double(next()) / double(1ull << 31); }
  /// Log-uniform integer in [lo, hi].
  std::int64_t log_int(double lo, double hi) {
    return std::int64_t(std::llround(std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo)))));
  }
  /// Fisher-Yates shuffle in place.
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[next() % i]);
  }
};

}  // namespace infraplan::calib
