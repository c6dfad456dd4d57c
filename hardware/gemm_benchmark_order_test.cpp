// How much the order of a GEMM benchmark decides its times, from bench/calib/order_probe_device.sh on
// three H100 machine starts (docs/data/calib/h100_order_probe*/, docs/accuracy.md "Does the order
// decide the tail?"): on one start, the LLaMA-shape GEMMs of bench/calib/llama_gemm_shapes.py through
// PyTorch (bench/pytorch/gemm_layouts.py) twice in the file's order, through infraplan-calibrate in
// the file's order twice and shuffled once, and (third start) through PyTorch once more, shuffled.
// Same order, same GPU: PyTorch and the calibrator agree to a few percent. Another order on the same
// GPU moves the times by about as much as the GEMM target allows: each shape runs at the clock the
// board's power limiter holds it at, which is set by what ran before it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/json_util.hpp"
#include "hardware/calibrated_cost_model.hpp"

namespace infraplan::hw {
namespace {

using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;  // layout, m, n, k

std::map<Key, double> load(const std::string& start, const std::string& run) {
  const Json j =
      read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/calib/" + start + "/" + run + ".json");
  std::map<Key, double> out;
  for (const auto& e : j.at("shapes"))
    out[{e.at("layout").get<std::string>(), e.at("m").get<std::int64_t>(), e.at("n").get<std::int64_t>(),
         e.at("k").get<std::int64_t>()}] = e.at("seconds").get<double>();
  return out;
}

struct Gap {
  std::size_t n = 0;
  double median = 0, p90 = 0;  ///< of |log(t_b / t_a)|
};

/// |log(t_b / t_a)| over the shapes both runs timed, kernels of `a` >= 10 µs.
Gap gap(const std::map<Key, double>& a, const std::map<Key, double>& b) {
  std::vector<double> v;
  for (const auto& [k, t] : a)
    if (auto it = b.find(k); it != b.end() && t >= 10e-6) v.push_back(std::fabs(std::log(it->second / t)));
  Gap g;
  g.n = v.size();
  if (v.empty()) return g;
  std::sort(v.begin(), v.end());
  g.median = v[v.size() / 2], g.p90 = v[std::size_t(0.9 * double(v.size() - 1))];
  return g;
}

void print(const char* start, const char* what, const Gap& g) {
  std::printf("%-24s %-44s n=%4zu median %4.1f%%  p90 %4.1f%%\n", start, what, g.n, 100 * g.median,
              100 * g.p90);
}

const char* const kStarts[] = {"h100_order_probe", "h100_order_probe_run2", "h100_order_probe_run3"};

TEST(GemmBenchmarkOrder, SameOrderAgreesAcrossHarnesses) {
  for (const char* s : kStarts) {
    const auto torch_a = load(s, "torch_a"), torch_b = load(s, "torch_b");
    const auto listed_a = load(s, "listed_a"), listed_b = load(s, "listed_b");
    const Gap repeat = gap(torch_a, torch_b), cal_repeat = gap(listed_a, listed_b);
    const Gap across_a = gap(torch_a, listed_a), across_b = gap(torch_b, listed_b);
    print(s, "PyTorch, listed order, twice", repeat);
    print(s, "calibrator, listed order, twice", cal_repeat);
    print(s, "PyTorch vs calibrator, both listed (a)", across_a);
    print(s, "PyTorch vs calibrator, both listed (b)", across_b);
    ASSERT_GE(repeat.n, 1300u) << s;
    ASSERT_GE(across_a.n, 1300u) << s;
    // 2026-12-06, three starts: repeats 0.7-0.9% / 4.0-4.7%; across harnesses 2.0-2.3% / 7.3-8.3%.
    EXPECT_LT(repeat.median, 0.015) << s;
    EXPECT_LT(repeat.p90, 0.06) << s;
    for (const Gap& g : {across_a, across_b}) {
      EXPECT_LT(g.median, 0.035) << s;
      EXPECT_LT(g.p90, 0.10) << s;
    }
  }
}

TEST(GemmBenchmarkOrder, AnotherOrderMovesTheTimesAsMuchAsTheTarget) {
  for (const char* s : kStarts) {
    const Gap g = gap(load(s, "listed_a"), load(s, "shuffled_a"));
    print(s, "calibrator, listed vs shuffled order", g);
    ASSERT_GE(g.n, 1300u) << s;
    // 2026-12-06: 6.0-6.4% / 15.5-16.4% on three starts — wider than the 5% / 10% GEMM target.
    EXPECT_GT(g.median, 0.04) << s;
    EXPECT_GT(g.p90, 0.12) << s;
  }
  // The same through PyTorch (third start, GPU-65861909): the framework's own times move as much.
  const auto torch_a = load("h100_order_probe_run3", "torch_a"),
             shuffled = load("h100_order_probe_run3", "torch_shuffled");
  const Gap g = gap(torch_a, shuffled), g_b = gap(load("h100_order_probe_run3", "torch_b"), shuffled);
  print("h100_order_probe_run3", "PyTorch, listed vs shuffled order (a)", g);
  print("h100_order_probe_run3", "PyTorch, listed vs shuffled order (b)", g_b);
  ASSERT_GE(g.n, 1300u);
  // 2026-12-06: 4.6% / 14.6% (both listed runs), against 0.8% / 4.1% between the two listed runs.
  EXPECT_GT(g.p90, 0.12);
  EXPECT_GT(g.p90, 2.5 * gap(torch_a, load("h100_order_probe_run3", "torch_b")).p90);
  // One answer per shape cannot be within 10% of both orders' p90 unless it sits between them: the
  // derived H100 profile, which answers at its reference clock, against each order.
  const auto h100 = make_calibrated_cost_model("h100-sxm5-80gb");
  std::map<Key, double> model;
  for (const auto& [k, t] : torch_a) {
    GemmShape sh;
    sh.layout = *parse_gemm_layout(std::get<0>(k));
    sh.m = std::get<1>(k), sh.n = std::get<2>(k), sh.k = std::get<3>(k);
    model[k] = h100->gemm(sh).seconds;
  }
  const Gap listed_err = gap(torch_a, model), shuffled_err = gap(shuffled, model);
  print("h100_order_probe_run3", "H100 profile vs PyTorch, listed order", listed_err);
  print("h100_order_probe_run3", "H100 profile vs PyTorch, shuffled order", shuffled_err);
  EXPECT_LT(listed_err.median, 0.12);
  EXPECT_LT(shuffled_err.median, 0.12);
}

}  // namespace
}  // namespace infraplan::hw
