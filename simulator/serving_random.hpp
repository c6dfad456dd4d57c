#pragma once
// Seeded random numbers and distributions for the serving simulator. Everything here is written
// out by hand (xoshiro256**, Box-Muller, Marsaglia-Tsang) so that the same seed gives the same
// numbers with every standard library; std::*_distribution does not promise that.
#include <cstdint>
#include <vector>

namespace infraplan::sim::serve {

/// xoshiro256** seeded through splitmix64. Value type: copy it to fork a stream.
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1);
  std::uint64_t next_u64();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Uniform in (0, 1]: safe for log().
  double uniform_pos() { return 1.0 - uniform(); }
  /// Uniform integer in [lo, hi] (inclusive).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  /// Exponential with mean `mean`.
  double exponential(double mean);
  /// Standard normal (Box-Muller, one value per call, the pair's second is cached).
  double normal();
  /// Gamma(shape k, scale theta): mean k·theta (Marsaglia-Tsang; k < 1 by boosting).
  double gamma(double k, double theta);
  /// A stream derived from this seed and `stream`, independent of how much this one was used.
  static Rng derive(std::uint64_t seed, std::uint64_t stream);

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

/// Zipf over ranks 1..n with exponent `alpha` (P(r) ∝ r^-alpha), by inverse CDF on a table.
class ZipfTable {
 public:
  ZipfTable() = default;
  ZipfTable(std::int64_t n, double alpha);
  /// Rank in [1, n].
  std::int64_t sample(Rng& rng) const;
  std::int64_t size() const { return std::int64_t(cdf_.size()); }

 private:
  std::vector<double> cdf_;
};

/// 64-bit mixing (splitmix64 finaliser); hash_combine for block hash chains.
std::uint64_t mix64(std::uint64_t x);
inline std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b) {
  return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2)));
}

}  // namespace infraplan::sim::serve
