// Every past fuzz finding (fuzz/regressions/<target>/) and every seed input (fuzz/seeds/<target>/)
// through its fuzz target, in every build: a finding stays fixed.
#include <dirent.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_targets.hpp"

namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  return out;
}

std::size_t run_all(const std::string& target, const std::function<int(const std::uint8_t*, std::size_t)>& f) {
  std::size_t n = 0;
  for (const char* kind : {"regressions", "seeds"})
    for (const auto& path : files_in(std::string(INFRAPLAN_SOURCE_DIR) + "/fuzz/" + kind + "/" + target)) {
      std::ifstream in(path, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      const std::string s = ss.str();
      SCOPED_TRACE(path);
      EXPECT_EQ(f(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()), 0);
      ++n;
    }
  return n;
}

}  // namespace

TEST(FuzzRegressions, Scenario) { EXPECT_GT(run_all("fuzz_scenario", infraplan::fuzz::scenario), 0u); }
TEST(FuzzRegressions, HfConfig) { EXPECT_GT(run_all("fuzz_hf_config", infraplan::fuzz::hf_config), 0u); }
TEST(FuzzRegressions, Profile) { EXPECT_GT(run_all("fuzz_profile", infraplan::fuzz::profile), 0u); }
TEST(FuzzRegressions, Trace) { EXPECT_GT(run_all("fuzz_trace", infraplan::fuzz::trace), 0u); }
TEST(FuzzRegressions, CliArgs) { EXPECT_GT(run_all("fuzz_cli_args", infraplan::fuzz::cli_args), 0u); }
