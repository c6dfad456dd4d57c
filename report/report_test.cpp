// Report tests: structure of the page for every kind of result, every number traced to the JSON,
// Markdown, deterministic bytes, bad inputs and big inputs.
#include "report/report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "report/format.hpp"
#include "report/render.hpp"
#include "report/test_support.hpp"

namespace infraplan::report {
namespace {

using testing::fixture;
using testing::inputs_for;

// Tests over every kind run once per kind (each in its own process under ctest, so a process
// computes only the result it needs).
class EveryKind : public ::testing::TestWithParam<std::string> {
 protected:
  const testing::Fixture& f() const { return fixture(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Report, EveryKind, ::testing::ValuesIn(testing::fixture_names()), [](const auto& i) {
  std::string n = i.param;
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
});

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST_P(EveryKind, HasItsSectionsAndDrawnCharts) {
  const std::map<std::string, std::vector<std::string>> expect = {
      {"memory-train", {"summary", "memory", "provenance"}},
      {"memory-serve", {"summary", "memory", "provenance"}},
      {"simulate-train", {"summary", "training", "memory", "provenance"}},
      {"simulate-serve", {"summary", "serving", "provenance"}},
      {"plan-train", {"summary", "plan", "provenance"}},
      {"plan-serve", {"summary", "plan", "provenance"}},
      {"validation", {"summary", "training", "memory", "validation", "provenance"}},
  };
  const std::string html = write_report(inputs_for(f()), Format::Html);
  EXPECT_EQ(testing::section_ids(html), expect.at(GetParam()));
  const auto svgs = testing::svg_elements(html);
  EXPECT_FALSE(svgs.empty());
  for (const auto& s : svgs) {
    EXPECT_NE(s.find("<title>"), std::string::npos) << "every chart has a title";
    EXPECT_GE(testing::svg_marks(s), 5) << s.substr(0, 200);
  }
  // Self-contained: no scripts, no external references of any kind.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
}

TEST_P(EveryKind, EveryTracedNumberEqualsTheJson) {
  const std::string html = write_report(inputs_for(f()), Format::Html);
  const auto traced = testing::traced_values(html);
  EXPECT_GE(traced.size(), 8u);
  for (const auto& t : traced) {
    ASSERT_LT(std::size_t(t.result), f().results.size());
    const Json& j = f().results[std::size_t(t.result)].at(Json::json_pointer(t.key));
    ASSERT_TRUE(j.is_number()) << t.key;
    EXPECT_EQ(t.value, j.get<double>()) << t.key;
    EXPECT_EQ(testing::check_shown(t, j.get<double>()), "");
  }
}

TEST_P(EveryKind, MarkdownHasTheTablesAndNumbers) {
  const auto in = inputs_for(f());
  const std::string md = write_report(in, Format::Markdown);
  EXPECT_EQ(md.find("<svg"), std::string::npos);
  EXPECT_EQ(md.find("<span"), std::string::npos);
  EXPECT_EQ(md.rfind("# ", 0), 0u);
  EXPECT_NE(md.find("## Summary"), std::string::npos);
  EXPECT_NE(md.find("## Provenance"), std::string::npos);
  EXPECT_NE(md.find("| --- |"), std::string::npos);
  // Every traced number of the HTML page appears in the Markdown with the same text.
  for (const auto& t : testing::traced_values(write_report(in, Format::Html)))
    EXPECT_NE(md.find(md_escape(t.text)), std::string::npos) << t.key << " " << t.text;
}

TEST(Report, ChartsForEachQuestion) {
  auto titles = [](const std::string& name) {
    const std::string html = write_report(inputs_for(fixture(name)), Format::Html);
    std::vector<std::string> t;
    for (const auto& s : testing::svg_elements(html)) {
      const auto a = s.find("<title>") + 7;
      t.push_back(s.substr(a, s.find("</title>") - a));
    }
    return t;
  };
  const auto mem = titles("memory-train");
  EXPECT_TRUE(has(mem, "Memory per GPU by pipeline stage"));
  const auto train = titles("simulate-train");
  EXPECT_TRUE(has(train, "Where the time goes, per pipeline stage"));
  EXPECT_TRUE(has(train, "Critical path of one iteration"));
  const auto serve = titles("simulate-serve");
  for (const char* t : {"Time to first token", "Time per output token and inter-token latency",
                        "End-to-end latency", "Throughput and goodput", "KV cache in use over time",
                        "Requests running and waiting over time", "Load per instance"})
    EXPECT_TRUE(has(serve, t)) << t;
  EXPECT_TRUE(has(titles("plan-train"), "Throughput per GPU against memory per GPU"));
  EXPECT_TRUE(has(titles("plan-train"), "Why layouts were rejected"));
  EXPECT_TRUE(has(titles("plan-serve"), "Throughput per GPU against speed per user"));
}

TEST(Report, HeadlineNumbersAreShown) {
  // The numbers a reader looks for first are on the page, traced to their keys.
  auto keys = [](const std::string& name) {
    std::vector<std::string> k;
    for (const auto& t : testing::traced_values(write_report(inputs_for(fixture(name)), Format::Html)))
      k.push_back(t.key);
    return k;
  };
  const auto train = keys("simulate-train");
  for (const char* k : {"/iteration_time_s", "/tokens_per_s", "/mfu", "/hfu", "/peak_bytes",
                        "/memory/total_bytes", "/breakdown/compute_s", "/breakdown/bubble_s"})
    EXPECT_TRUE(has(train, k)) << k;
  const auto serve = keys("simulate-serve");
  for (const char* k :
       {"/metrics/ttft_ms/p50", "/metrics/ttft_ms/p99", "/metrics/tpot_ms/p90", "/metrics/itl_ms/p99",
        "/metrics/e2e_ms/max", "/metrics/goodput_rps", "/metrics/throughput_rps", "/metrics/preemptions",
        "/metrics/prefix_hit_rate", "/kv_transfer/count", "/kv_transfer/p90_ms", "/instances/0/requests"})
    EXPECT_TRUE(has(serve, k)) << k;
  const auto mem = keys("memory-train");
  EXPECT_TRUE(has(mem, "/total_bytes"));
  EXPECT_TRUE(has(mem, "/capacity_bytes"));
  const auto plan = keys("plan-train");
  EXPECT_TRUE(has(plan, "/candidates/0/iteration_time_s"));
  EXPECT_TRUE(has(plan, "/rejected/0/count"));
  const auto ps = keys("plan-serve");
  EXPECT_TRUE(has(ps, "/candidates/0/goodput_rps"));
}

TEST(Report, CdfCurvesMatchThePercentiles) {
  // The CDF plotted is the distribution whose percentiles the table shows.
  const Json& j = fixture("simulate-serve").results[0];
  const auto& lv = j["distributions"]["levels"];
  for (const char* m : {"ttft_ms", "tpot_ms", "e2e_ms", "queue_ms", "itl_ms"})
    for (auto [q, p] : {std::pair{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}}) {
      const auto it = std::find(lv.begin(), lv.end(), Json(q));
      ASSERT_NE(it, lv.end());
      EXPECT_EQ(j["distributions"][m][std::size_t(it - lv.begin())], j["metrics"][m][p]) << m << " " << p;
    }
}

TEST(Report, UncertaintyBandShownWhenTheResultHasOne) {
  auto in = inputs_for(fixture("simulate-train"));
  const double T = in.results[0]["iteration_time_s"].get<double>();
  EXPECT_EQ(write_report(in, Format::Html).find("cost model's range"), std::string::npos);
  in.results[0]["iteration_time_range_s"] = {0.9 * T, 1.2 * T};
  const std::string html = write_report(in, Format::Html);
  EXPECT_NE(html.find("where the iteration may end"), std::string::npos);
  EXPECT_NE(html.find("range " + fmt_seconds(0.9 * T) + " – " + fmt_seconds(1.2 * T)), std::string::npos);
  for (const auto& t : testing::traced_values(html)) {
    if (t.key.rfind("/iteration_time_range_s", 0) == 0) {
      EXPECT_EQ(testing::check_shown(t, t.value), "");
    }
  }
}

TEST(Report, SameInputsSameBytes) {
  const auto in = inputs_for(fixture("simulate-serve"));
  EXPECT_EQ(write_report(in, Format::Html), write_report(in, Format::Html));
  EXPECT_EQ(write_report(in, Format::Markdown), write_report(in, Format::Markdown));
}

TEST(Report, CombinesAQuestionAndItsPlan) {
  auto in = inputs_for(fixture("simulate-train"));
  in.results.push_back(fixture("plan-train").results[0]);
  in.origins.push_back("plan");
  const std::string html = write_report(in, Format::Html);
  EXPECT_EQ(testing::section_ids(html),
            (std::vector<std::string>{"summary", "training", "memory", "plan", "provenance"}));
  for (const auto& t : testing::traced_values(html))
    EXPECT_EQ(t.value, in.results[std::size_t(t.result)].at(Json::json_pointer(t.key)).get<double>())
        << t.key;
}

TEST(Report, ValidationSectionComparesMeasuredValues) {
  auto in = inputs_for(fixture("simulate-train"));
  const double T = in.results[0]["iteration_time_s"].get<double>();
  in.measured = {{"source", "bench run"}, {"values", {{"iteration_time_s", T * 1.25}, {"/mfu", 0.5}}}};
  const std::string html = write_report(in, Format::Html);
  EXPECT_TRUE(has(testing::section_ids(html), "validation"));
  EXPECT_NE(html.find("-20.0%"), std::string::npos);  // predicted is 20% below measured
  in.measured["values"]["no_such_key"] = 1.0;
  try {
    write_report(in, Format::Html);
    FAIL() << "unknown measured key accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_key"), std::string::npos) << e.what();
  }
}

void expect_error(const Json& j, const std::string& needle) {
  ReportInputs in;
  in.results = {j};
  in.origins = {"r.json"};
  try {
    write_report(in, Format::Html);
    FAIL() << "accepted: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("r.json"), std::string::npos) << e.what();
  }
}

TEST(Report, BadResultsGetClearErrors) {
  Json good = fixture("memory-serve").results[0];
  Json j = good;
  j["result_kind"] = "simulate-dance";
  expect_error(j, "unknown result_kind 'simulate-dance'");
  j = good;
  j["result_version"] = 2;
  expect_error(j, "result_version 2");
  j = good;
  j.erase("result_kind");
  expect_error(j, "no 'result_kind' key");
  expect_error(Json::array({1, 2}), "not an infraplan result");
  j = good;
  j.erase("total_bytes");
  expect_error(j, "total_bytes");
  EXPECT_THROW(parse_format("pdf"), Error);
  EXPECT_THROW(write_report(ReportInputs{}, Format::Html), Error);
}

TEST(Report, BigInputsAreBinnedAndSmall) {
  // A 100,000-request serving run: a series sample every 0.5 s over 10,000 s, and a 16,384-GPU
  // training iteration whose critical path has 200,000 segments.
  Json serve = fixture("simulate-serve").results[0];
  Json series = Json::array();
  for (int i = 0; i < 20000; ++i)
    series.push_back({{"t_s", 0.5 * i},
                      {"kv_usage", 0.5 + 0.4 * std::sin(i * 0.01)},
                      {"running", 100 + i % 50},
                      {"waiting", i % 200},
                      {"preemptions", i / 10},
                      {"prefix_hit_rate", 0.3}});
  serve["metrics"]["series"] = series;
  serve["metrics"]["requests"] = 100000;
  Json train = fixture("simulate-train").results[0];
  Json cp = Json::array();
  const char* cats[] = {"compute", "tp", "compute", "pp", "compute", "dp"};
  for (int i = 0; i < 200000; ++i) cp.push_back({{"category", cats[i % 6]}, {"seconds", 1e-5}, {"ops", 1}});
  train["critical_path"] = cp;
  train["iteration_time_s"] = 2.0;
  train["gpus"] = 16384;
  for (const Json& j : {serve, train}) {
    ReportInputs in;
    in.results = {j};
    in.origins = {"big"};
    const std::string html = write_report(in, Format::Html);
    if (j.contains("metrics")) {
      EXPECT_NE(html.find("Prefix-cache hits and preemptions over time"), std::string::npos);
      EXPECT_NE(html.find("binned into 300"), std::string::npos);
    } else {
      EXPECT_NE(html.find("binned into 600 slices"), std::string::npos);
    }
    EXPECT_LT(html.size(), 5u * 1000 * 1000);
    EXPECT_LT(html.size(), 600u * 1000) << "binning keeps big runs near the size of small ones";
  }
}

}  // namespace
}  // namespace infraplan::report
