// The quantiles of a validation_error record (hardware/validation_error.hpp): where they sit among
// the rows, that the band [p10, p90] holds 80% of later rows on average for a handful of rows, and
// records kept by band of predicted time.
#include "hardware/validation_error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
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

// A record by band of predicted time: each band's quantiles come from its own rows, a prediction takes
// the band it falls in (the last band is open), and the record over all rows is kept beside them.
TEST(ValidationErrorQuantiles, BandsOfPredictedTime) {
  std::vector<std::pair<double, double>> fit, held;
  for (int i = 1; i <= 9; ++i) {
    fit.push_back({20e-6, 0.90 + 0.01 * i});  // short predictions: 0.91 … 0.99
    fit.push_back({2e-3, 1.00 + 0.01 * i});   // long ones: 1.01 … 1.09
  }
  held = {{25e-6, 0.95}, {25e-6, 1.05}, {5e-3, 1.05}, {5e-3, 1.20}};
  const ValidationError v = validation_error_by_time(fit, held, "kernels", {100e-6});
  ASSERT_EQ(v.bands.size(), 2u);
  EXPECT_EQ(v.rows, 18);
  EXPECT_DOUBLE_EQ(v.bands[0].from_s, 0);
  EXPECT_DOUBLE_EQ(v.bands[0].to_s, 100e-6);
  EXPECT_DOUBLE_EQ(v.bands[1].from_s, 100e-6);
  EXPECT_FALSE(std::isfinite(v.bands[1].to_s));
  EXPECT_NEAR(v.bands[0].p10, 0.91, 1e-12);
  EXPECT_NEAR(v.bands[0].p90, 0.99, 1e-12);
  EXPECT_NEAR(v.bands[1].p50, 1.05, 1e-12);
  EXPECT_EQ(v.bands[0].held_out_rows, 2);
  EXPECT_DOUBLE_EQ(v.bands[0].held_out_coverage, 0.5);
  EXPECT_DOUBLE_EQ(v.bands[1].held_out_coverage, 0.5);
  const ValidationError s = v.for_prediction(50e-6), l = v.for_prediction(1.0);
  EXPECT_NEAR(s.p90, 0.99, 1e-12);
  EXPECT_NEAR(l.p10, 1.01, 1e-12);
  EXPECT_EQ(s.rows, 9);
  EXPECT_NE(s.summary().find("kernels, predicted below 100 us"), std::string::npos) << s.summary();
  EXPECT_NE(l.summary().find("predicted 100 us or more"), std::string::npos) << l.summary();
  // The written record carries the bands; without bands a record answers for every size.
  const Json r = validation_error_record("gemm", v, {"a", "b", "c"});
  ASSERT_EQ(r.at("bands").size(), 2u);
  EXPECT_FALSE(r.at("bands")[1].contains("to_s"));
  const ValidationError plain = validation_error_of({1.0, 1.1, 1.2}, {}, "rows");
  EXPECT_DOUBLE_EQ(plain.for_prediction(1e-3).p90, plain.p90);
  EXPECT_FALSE(validation_error_record("gemm", plain, {"a", "b", "c"}).contains("bands"));
  // A band without fit rows, or edges out of order, are refused.
  EXPECT_THROW(validation_error_by_time(fit, held, "kernels", {1e-6}), Error);
  EXPECT_THROW(validation_error_by_time(fit, held, "kernels", {1e-3, 1e-4}), Error);
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
