// The report in a real browser: Debian's chromium, headless, renders every kind of report to a
// PNG at 1,280 px and dumps the DOM it built; the DOM must hold the sections and non-empty charts,
// and chromium's network log must show no request from the page. Skips (with a message) only
// when chromium is not installed. Set INFRAPLAN_REPORT_SCREENSHOTS=DIR to keep the PNGs
// (docs/img/report-*.png are made this way).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json_util.hpp"
#include "report/report.hpp"
#include "report/test_support.hpp"

namespace infraplan::report {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Browser : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    chromium_ = testing::chromium_path();
    if (chromium_.empty())
      GTEST_SKIP() << "chromium is not installed (scripts/setup-deps.sh installs it); browser test skipped";
    dir_ = fs::temp_directory_path() / ("infraplan-browser-" + std::to_string(::getpid()) + "-" + name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::string name() const {
    std::string n = GetParam();
    for (auto& c : n)
      if (c == '/') c = '_';
    return n;
  }
  // Runs chromium headless on `page` with `mode` ("--dump-dom" or "--screenshot=FILE ..."); the
  // network log goes to `netlog`. Returns stdout; fails the test on a non-zero exit.
  std::string run(const fs::path& page, const std::string& mode, const fs::path& netlog,
                  const std::string& tag) {
    const fs::path out = dir_ / (tag + ".out"), err = dir_ / (tag + ".err");
    // No sandbox (CI runs as root), no GPU, no /dev/shm (small in containers), no background
    // services, every host name unresolvable: a page request shows in the log and goes nowhere.
    const std::string cmd =
        "timeout 120 " + chromium_ +
        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --no-first-run"
        " --no-default-browser-check --disable-background-networking --disable-component-update "
        "--disable-sync"
        " --disable-extensions --disable-default-apps --mute-audio --host-resolver-rules='MAP * ~NOTFOUND'"
        " --user-data-dir='" +
        (dir_ / ("profile-" + tag)).string() + "' --log-net-log='" + netlog.string() + "' " + mode +
        " 'file://" + page.string() + "' >'" + out.string() + "' 2>'" + err.string() + "'";
    const int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << cmd << "\n" << slurp(err).substr(0, 2000);
    return slurp(out);
  }
  // URLs the page itself asked for (the network isolation key of a page loaded from a file is
  // file://), other than file: URLs. Chromium's own background requests carry other keys.
  static std::vector<std::string> page_requests(const fs::path& netlog) {
    std::vector<std::string> urls;
    const std::string text = slurp(netlog);
    // Chromium may end the log without closing the events array when it is stopped.
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded()) j = Json::parse(text + "]}", nullptr, false);
    if (j.is_discarded() || !j.contains("constants") || !j.contains("events")) {
      ADD_FAILURE() << "unreadable net log " << netlog << " (" << text.size() << " bytes)";
      return urls;
    }
    const int start_job = j["constants"]["logEventTypes"].value("URL_REQUEST_START_JOB", -1);
    for (const auto& e : j["events"]) {
      if (e.value("type", -2) != start_job || !e.contains("params")) continue;
      const auto& p = e["params"];
      const std::string url = p.value("url", ""), nik = p.value("network_isolation_key", "");
      if (nik.find("file://") != std::string::npos && url.rfind("file:", 0) != 0) urls.push_back(url);
    }
    return urls;
  }
  std::string chromium_;
  fs::path dir_;
};

TEST_P(Browser, RendersTheReportWithChartsAndNoNetwork) {
  const auto& f = testing::fixture(GetParam());
  const fs::path page = dir_ / (name() + ".html");
  {
    std::ofstream out(page, std::ios::binary);
    out << write_report(testing::inputs_for(f), Format::Html);
  }
  const std::string dom = run(page, "--dump-dom", dir_ / "dom.netlog.json", "dom");
  ASSERT_FALSE(dom.empty());
  const auto ids = testing::section_ids(dom);
  EXPECT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), "summary");
  EXPECT_EQ(ids.back(), "provenance");
  const auto svgs = testing::svg_elements(dom);
  EXPECT_FALSE(svgs.empty());
  for (const auto& s : svgs) EXPECT_GE(testing::svg_marks(s), 5);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_EQ(page_requests(dir_ / "dom.netlog.json"), std::vector<std::string>{});

  const fs::path png = dir_ / (name() + ".png");
  // The top of the page; the validation page is taller so that its last section is in the picture.
  const std::string height = GetParam() == "validation" ? "3200" : "2400";
  run(page, "--window-size=1280," + height + " --screenshot='" + png.string() + "'", dir_ / "png.netlog.json", "png");
  const std::string bytes = slurp(png);
  ASSERT_GT(bytes.size(), 20000u) << "screenshot missing or blank";
  ASSERT_EQ(bytes.substr(1, 3), "PNG");
  // IHDR: width and height, big-endian, at bytes 16..23.
  auto be32 = [&](std::size_t o) {
    return (unsigned(uint8_t(bytes[o])) << 24) | (unsigned(uint8_t(bytes[o + 1])) << 16) |
           (unsigned(uint8_t(bytes[o + 2])) << 8) | unsigned(uint8_t(bytes[o + 3]));
  };
  EXPECT_EQ(be32(16), 1280u);
  EXPECT_EQ(page_requests(dir_ / "png.netlog.json"), std::vector<std::string>{});
  if (const char* keep = std::getenv("INFRAPLAN_REPORT_SCREENSHOTS"))
    fs::copy_file(png, fs::path(keep) / ("report-" + GetParam() + ".png"),
                  fs::copy_options::overwrite_existing);
}

INSTANTIATE_TEST_SUITE_P(Report, Browser, ::testing::ValuesIn(testing::fixture_names()), [](const auto& i) {
  std::string n = i.param;
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
});

// The network check can fail: a page that loads an image from the network is caught.
class BrowserControl : public Browser {};
TEST_P(BrowserControl, CatchesAPageThatRequestsTheNetwork) {
  const fs::path page = dir_ / "control.html";
  {
    std::ofstream out(page);
    out << "<!DOCTYPE html><html><body><p>x</p><img src=\"https://example.invalid/pixel.png\"></body></html>";
  }
  run(page, "--dump-dom", dir_ / "control.netlog.json", "control");
  EXPECT_EQ(page_requests(dir_ / "control.netlog.json"),
            std::vector<std::string>{"https://example.invalid/pixel.png"});
}
INSTANTIATE_TEST_SUITE_P(Report, BrowserControl, ::testing::Values("control"));

}  // namespace
}  // namespace infraplan::report
