// The quantiles of a validation_error record (hardware/validation_error.hpp): where they sit among
// the rows, and that the band [p10, p90] holds 80% of later rows on average for a handful of rows.
#include "hardware/validation_error.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/error.hpp"

namespace infraplan::hw {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = n; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  return v;
}

TEST(ValidationErrorQuantiles, SitAtRankFTimesNPlusOne) {
  const ValidationError nine = validation_error_of(one_to(9), {}, "rows");
  EXPECT_DOUBLE_EQ(nine.p10, 1.0);  // rank 1.0
  EXPECT_DOUBLE_EQ(nine.p50, 5.0);  // rank 5.0
  EXPECT_DOUBLE_EQ(nine.p90, 9.0);  // rank 9.0
  const ValidationError eighteen = validation_error_of(one_to(18), {}, "rows");
  EXPECT_NEAR(eighteen.p10, 1.9, 1e-12);
  EXPECT_NEAR(eighteen.p50, 9.5, 1e-12);
  EXPECT_NEAR(eighteen.p90, 17.1, 1e-12);
  // Beyond the rows the band stops at the first and the last one.
  const ValidationError three = validation_error_of({2.0, 1.0, 3.0}, {}, "rows");
  EXPECT_DOUBLE_EQ(three.p10, 1.0);
  EXPECT_DOUBLE_EQ(three.p90, 3.0);
  const ValidationError one = validation_error_of({1.2}, {1.2, 1.3}, "rows");
  EXPECT_DOUBLE_EQ(one.p10, 1.2);
  EXPECT_DOUBLE_EQ(one.p90, 1.2);
  EXPECT_DOUBLE_EQ(one.held_out_coverage, 0.5);
  EXPECT_THROW(validation_error_of({}, {}, "rows"), Error);
}

// Rows and later rows drawn from one distribution: the band of 18 rows holds 80% of the later ones
// on average (interpolating at ranks f·(n − 1) + 1 would hold 72%).
TEST(ValidationErrorQuantiles, BandOfFewRowsHoldsEightyPercentOfLaterRows) {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto uniform = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / double(1ull << 53);
  };
  for (const int n : {12, 18, 40}) {
    double inside = 0;
    const int trials = 20000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> rows(n);
      for (double& r : rows) r = uniform();
      const ValidationError v = validation_error_of(rows, {uniform()}, "rows");
      inside += v.held_out_coverage;
    }
    EXPECT_NEAR(inside / trials, 0.80, 0.012) << n << " rows";
  }
}

}  // namespace
}  // namespace infraplan::hw
