// Chart and formatting primitives: readable ticks, units, escaping, binning, no empty charts.
#include "report/svg_chart.hpp"

#include <gtest/gtest.h>

#include "report/format.hpp"
#include "report/sections.hpp"

namespace infraplan::report {
namespace {

TEST(Format, UnitsAndSignificantDigits) {
  EXPECT_EQ(fmt_seconds(0.45671), "456.7 ms");
  EXPECT_EQ(fmt_seconds(12.345), "12.35 s");
  EXPECT_EQ(fmt_seconds(3 * 86400.0), "3.000 d");
  EXPECT_EQ(fmt_seconds(2.5e-6), "2.500 µs");
  EXPECT_EQ(fmt_bytes(1.5 * 1073741824.0), "1.500 GiB");
  EXPECT_EQ(fmt_bytes(512), "512.0 B");
  EXPECT_EQ(fmt_percent(0.4567, 1), "45.7%");
  EXPECT_EQ(fmt_rate(12345.6, "tokens/s"), "12\u2009346 tokens/s");
  EXPECT_EQ(fmt_int(100000), "100\u2009000");
  EXPECT_EQ(fmt_sig(9.99996), "10.00");
  EXPECT_EQ(fmt_sig(0), "0");
  EXPECT_EQ(fmt_flops(989.4e12), "989.4 TFLOP/s");
  EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(md_escape("a|b_c"), "a\\|b\\_c");
}

TEST(Scale, TicksAreRoundNumbersInsideTheDomain) {
  svg::Scale s(0, 7.3, 0, 100);
  const auto t = s.ticks(6);
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t.front(), 0);
  for (double v : t) EXPECT_LE(v, 7.3 + 1e-9);
  svg::Scale l(1, 1000, 0, 100, true);
  EXPECT_EQ(l.ticks(), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_NEAR(l(10), 100.0 / 3, 1e-9);
  const auto d = svg::nice_domain(3, 97, false, true);
  EXPECT_EQ(d.first, 0);
  EXPECT_EQ(d.second, 100);
}

TEST(Charts, HaveTitleLegendAxesAndMarks) {
  svg::LineChart c;
  c.title = "CDF <of> things";
  c.x.title = "milliseconds";
  c.y.title = "share (%)";
  c.series.push_back({"a", "#0072B2", {1, 2, 3}, {0.1, 0.5, 1.0}, {}, {}, false, false});
  c.refs.push_back({2.5, "SLO", true, ""});
  const std::string s = svg::line_chart(c);
  EXPECT_EQ(s.rfind("<svg", 0), 0u);
  EXPECT_NE(s.find("<title>CDF &lt;of&gt; things</title>"), std::string::npos);
  EXPECT_NE(s.find(">milliseconds</text>"), std::string::npos);
  EXPECT_NE(s.find(">SLO</text>"), std::string::npos);
  EXPECT_NE(s.find("<polyline"), std::string::npos);
  EXPECT_EQ(s.find("http"), std::string::npos);
  // Empty and degenerate data still draw a valid frame, no NaN coordinates.
  svg::LineChart e;
  e.title = "empty";
  e.series.push_back({"z", "#000000", {0, 0}, {0, 0}, {}, {}, false, false});
  const std::string es = svg::line_chart(e);
  EXPECT_EQ(es.find("nan"), std::string::npos);
  EXPECT_EQ(es.find("inf"), std::string::npos);
  svg::StackedBars b;
  b.title = "bars";
  b.categories = {"x", "y"};
  b.colors = {"#0072B2", "#E69F00"};
  b.bar_labels = {"one"};
  b.values = {{1, 2}};
  b.refs.push_back({4, "capacity", true, ""});
  const std::string bs = svg::stacked_bars(b);
  EXPECT_NE(bs.find("capacity"), std::string::npos);
  EXPECT_NE(bs.find("#E69F00"), std::string::npos);
}

TEST(Binning, KeepsMeanMinMaxAndShortSeries) {
  std::vector<double> x, y;
  for (int i = 0; i < 1000; ++i) x.push_back(i), y.push_back(i % 10 == 0 ? 100 : 1);
  const auto b = bin_series(x, y, 100);
  ASSERT_EQ(b.x.size(), 100u);
  EXPECT_DOUBLE_EQ(b.x[0], 4.5);
  EXPECT_DOUBLE_EQ(b.max[0], 100);
  EXPECT_DOUBLE_EQ(b.min[0], 1);
  EXPECT_DOUBLE_EQ(b.mean[0], (100 + 9) / 10.0);
  const auto s = bin_series({1, 2}, {3, 4}, 100);
  EXPECT_EQ(s.mean, (std::vector<double>{3, 4}));
}

}  // namespace
}  // namespace infraplan::report
