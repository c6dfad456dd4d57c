#include "common/input_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/json_text.hpp"

using namespace infraplan;

namespace {

std::string message_of(const std::string& path, std::uint64_t max = 1 << 20) {
  try {
    read_input_file(path, max, "scenario");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string temp_dir() {
  char tmpl[] = "/tmp/infraplan-input-XXXXXX";
  return mkdtemp(tmpl);
}

}  // namespace

TEST(InputFile, RegularFilesOnly) {
  EXPECT_NE(message_of("/dev/zero").find("character device"), std::string::npos);
  EXPECT_NE(message_of("/tmp").find("is a directory"), std::string::npos);
  EXPECT_NE(message_of("/nonexistent/x.json").find("cannot open"), std::string::npos);
  const std::string dir = temp_dir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(message_of(fifo).find("FIFO"), std::string::npos);  // refused, not blocked on
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  std::remove(fifo.c_str());
  rmdir(dir.c_str());
}

TEST(InputFile, SizeIsCheckedBeforeReading) {
  const std::string dir = temp_dir();
  const std::string f = dir + "/big.json";
  std::ofstream(f) << std::string(2000, ' ') << "{}";
  EXPECT_NE(message_of(f, 1000).find("2002 bytes"), std::string::npos);
  EXPECT_EQ(read_input_file(f, 4096, "scenario").size(), 2002u);
  EXPECT_EQ(read_json_file(f), Json::object());
  std::remove(f.c_str());
  rmdir(dir.c_str());
}
