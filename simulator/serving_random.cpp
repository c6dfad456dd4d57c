#include "simulator/serving_random.hpp"

#include <algorithm>
#include <cmath>

namespace infraplan::sim::serve {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    s = mix64(x);
  }
}

Rng Rng::derive(std::uint64_t seed, std::uint64_t stream) {
  return Rng(mix64(seed) ^ mix64(stream * 0x632be59bd9b4e019ULL + 1));
}

static inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const std::uint64_t span = std::uint64_t(hi - lo) + 1;
  return lo + std::int64_t(next_u64() % span);  // bias < 2^-40 for the spans used here
}

double Rng::exponential(double mean) { return -mean * std::log(uniform_pos()); }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = uniform_pos(), u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_ = r * std::sin(2.0 * M_PI * u2);
  has_spare_ = true;
  return r * std::cos(2.0 * M_PI * u2);
}

double Rng::gamma(double k, double theta) {
  if (k < 1.0) {
    // Gamma(k) = Gamma(k + 1) · U^(1/k).
    const double g = gamma(k + 1.0, 1.0);
    return theta * g * std::pow(uniform_pos(), 1.0 / k);
  }
  const double d = k - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform_pos();
    if (u < 1.0 - 0.0331 * x * x * x * x) return theta * d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return theta * d * v;
  }
}

ZipfTable::ZipfTable(std::int64_t n, double alpha) {
  cdf_.resize(std::size_t(std::max<std::int64_t>(n, 1)));
  double acc = 0;
  for (std::size_t i = 0; i < cdf_.size(); ++i) {
    acc += std::pow(double(i + 1), -alpha);
    cdf_[i] = acc;
  }
  for (auto& c : cdf_) c /= acc;
}

std::int64_t ZipfTable::sample(Rng& rng) const {
  const double u = rng.uniform();
  auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  if (it == cdf_.end()) --it;
  return std::int64_t(it - cdf_.begin()) + 1;
}

}  // namespace infraplan::sim::serve
