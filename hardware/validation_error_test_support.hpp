#pragma once
// The accuracy tests that compute a profile's validation record (hardware/validation_error.hpp):
// with INFRAPLAN_WRITE_VALIDATION_ERROR=DIR they write DIR/<kind>.json for
// bench/calib/validation_error_to_profile.py; otherwise they check that the profile's record still
// describes the model as it is.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hardware/profile.hpp"
#include "hardware/validation_error.hpp"

namespace infraplan::hw {

/// Writes the record as DIR[/subdir]/KIND.json and returns true when INFRAPLAN_WRITE_VALIDATION_ERROR=DIR
/// is set (`subdir`: the GPU, for a profile other than the H200's).
inline bool write_validation_error_record(const std::string& kind, const ValidationError& v,
                                          const ValidationErrorSources& from,
                                          const std::string& subdir = "") {
  const char* dir = std::getenv("INFRAPLAN_WRITE_VALIDATION_ERROR");
  if (!dir) return false;
  const std::string out = subdir.empty() ? std::string(dir) : std::string(dir) + "/" + subdir;
  std::filesystem::create_directories(out);
  std::ofstream(out + "/" + kind + ".json") << validation_error_record(kind, v, from).dump(1) << "\n";
  return true;
}

/// The profile's record of `kind` against `now` (the record computed from the model as it is):
/// rows and held-out rows equal, quantiles within 0.005, coverage within `coverage_tolerance`; the same
/// band by band.
inline void expect_validation_error_current(const Profile& p, const std::string& kind,
                                            const ValidationError& now, double coverage_tolerance,
                                            const std::string& test_file) {
  const auto it = p.validation_error.find(kind);
  ASSERT_NE(it, p.validation_error.end()) << "the profile records no validation_error." << kind;
  const ValidationError& v = it->second;
  const std::string how = " (the model moved: rewrite the record, see " + test_file + ")";
  auto expect_same = [&](const ValidationQuantiles& a, const ValidationQuantiles& b,
                         const std::string& what) {
    EXPECT_EQ(a.rows, b.rows) << what << how;
    EXPECT_NEAR(a.p10, b.p10, 0.005) << what << how;
    EXPECT_NEAR(a.p50, b.p50, 0.005) << what << how;
    EXPECT_NEAR(a.p90, b.p90, 0.005) << what << how;
    EXPECT_EQ(a.held_out_rows, b.held_out_rows) << what << how;
    EXPECT_NEAR(a.held_out_coverage, b.held_out_coverage, coverage_tolerance) << what << how;
  };
  expect_same(v, now, kind);
  ASSERT_EQ(v.bands.size(), now.bands.size()) << kind << " bands" << how;
  for (std::size_t i = 0; i < v.bands.size(); ++i) {
    const std::string band = kind + " band " + std::to_string(i);
    EXPECT_EQ(v.bands[i].from_s, now.bands[i].from_s) << band << how;
    EXPECT_EQ(v.bands[i].to_s, now.bands[i].to_s) << band << how;
    expect_same(v.bands[i], now.bands[i], band);
  }
}

}  // namespace infraplan::hw
