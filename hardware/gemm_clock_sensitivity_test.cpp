// How much of a GEMM's time follows the SM clock, measured shape by shape on four H100 machine
// starts (bench/calib/order_probe_device.sh, docs/data/calib/h100_order_probe*/; docs/accuracy.md
// "How a GEMM's time follows the clock"). The calibrator timed the same 1,530 LLaMA-shape GEMMs in
// two orders on one start (listed_a, shuffled_a); the order moved each shape's clock (nvidia-smi's
// SM clock read just before and after it) by up to 25%, and log(t_listed / t_shuffled) against
// log(clock_shuffled / clock_listed) gives the exponent β of t ∝ clock^−β for each group of shapes.
// The exponent is not one number per format: it follows the share of the kernel's time the tensor
// cores would need at their full rate (the busy share, FLOPs / (time · peak per clock · clock)),
// from ~0.4 for the short, launch- and latency-bound kernels to ~0.75 for the long ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/json_util.hpp"
#include "hardware/gpu_spec.hpp"

namespace infraplan::hw {
namespace {

/// Dense bf16 tensor-core FLOPs per SM per clock on sm_90 (989.4 TFLOP/s = 132 SMs × 4,096 × 1,830 MHz,
/// the H100 SXM5 datasheet's dense peak at its boost clock).
constexpr double kBf16FlopsPerSmClock = 4096;

struct Timed {
  double seconds = 0, mhz = 0;  ///< the median time and the clock read around the shape
};

using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;  // layout, m, n, k

std::map<Key, Timed> load_run(const std::string& start, const std::string& run) {
  const Json j =
      read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/calib/" + start + "/" + run + ".json");
  std::map<Key, Timed> out;
  for (const auto& e : j.at("shapes")) {
    const auto& c = e.at("clock_mhz").at(0);
    out[{e.at("layout").get<std::string>(), e.at("m").get<std::int64_t>(), e.at("n").get<std::int64_t>(),
         e.at("k").get<std::int64_t>()}] = {e.at("seconds").get<double>(),
                                            0.5 * (c.at(0).get<double>() + c.at(1).get<double>())};
  }
  return out;
}

struct Pair {
  double busy, kernel_s, dlog_clock, dlog_time;  ///< log(c_s / c_l), log(t_l / t_s)
};

/// Least-squares slope through the origin of dlog_time on dlog_clock.
double slope(const std::vector<Pair>& v) {
  double xy = 0, xx = 0;
  for (const Pair& p : v) xy += p.dlog_clock * p.dlog_time, xx += p.dlog_clock * p.dlog_clock;
  return xx > 0 ? xy / xx : 0.0;
}

/// p90 of |log(t_l / (t_s · (c_s / c_l)^β))| over the pairs, β from `beta(pair)`.
template <class Beta>
double referral_p90(const std::vector<Pair>& v, Beta&& beta) {
  std::vector<double> a;
  for (const Pair& p : v) a.push_back(std::fabs(p.dlog_time - beta(p) * p.dlog_clock));
  std::sort(a.begin(), a.end());
  return a[std::size_t(0.9 * double(a.size() - 1))];
}

TEST(GemmClockSensitivity, FollowsTheTensorBusyShare) {
  const GpuSpec& gpu = find_gpu("h100-sxm5-80gb");
  const double per_mhz = double(gpu.sms) * kBf16FlopsPerSmClock * 1e6;
  // The first three starts are where the relation was found; the fourth (2026-12-06 22:27 UTC) was
  // run after it, its second pair in the opposite sequence (shuffled first); the fifth (2026-12-07
  // 09:26 UTC) is the whole order probe again, on another H100.
  const std::tuple<const char*, const char*, const char*> pairs_of_runs[] = {
      {"h100_order_probe", "listed_a", "shuffled_a"},
      {"h100_order_probe_run2", "listed_a", "shuffled_a"},
      {"h100_order_probe_run3", "listed_a", "shuffled_a"},
      {"h100_order_probe_run4", "listed_a", "shuffled_a"},
      {"h100_order_probe_run4", "listed_b", "shuffled_b"},
      {"h100_order_probe_run5", "listed_a", "shuffled_a"}};
  for (const auto& [start, listed_run, shuffled_run] : pairs_of_runs) {
    const auto listed = load_run(start, listed_run), shuffled = load_run(start, shuffled_run);
    const std::string label = std::string(start) + " " + std::string(listed_run).substr(7);  // "… a" / "… b"
    std::vector<Pair> pairs;
    for (const auto& [k, l] : listed) {
      const auto it = shuffled.find(k);
      if (it == shuffled.end() || l.seconds < 10e-6 || !(l.mhz > 0) || !(it->second.mhz > 0)) continue;
      const double flops = 2.0 * double(std::get<1>(k)) * double(std::get<2>(k)) * double(std::get<3>(k));
      pairs.push_back({flops / (l.seconds * per_mhz * l.mhz), l.seconds, std::log(it->second.mhz / l.mhz),
                       std::log(l.seconds / it->second.seconds)});
    }
    ASSERT_GE(pairs.size(), 1300u) << label;
    std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.busy < b.busy; });
    constexpr int kGroups = 6;
    std::vector<double> beta, busy;
    for (int g = 0; g < kGroups; ++g) {
      const std::size_t lo = pairs.size() * std::size_t(g) / kGroups,
                        hi = pairs.size() * std::size_t(g + 1) / kGroups;
      const std::vector<Pair> part(pairs.begin() + long(lo), pairs.begin() + long(hi));
      std::vector<double> e, t;
      for (const Pair& p : part) e.push_back(p.busy), t.push_back(p.kernel_s);
      std::nth_element(e.begin(), e.begin() + long(e.size() / 2), e.end());
      std::nth_element(t.begin(), t.begin() + long(t.size() / 2), t.end());
      beta.push_back(slope(part)), busy.push_back(e[e.size() / 2]);
      std::printf("%-24s busy share %.2f-%.2f (median %.2f, kernel %6.0f us) n=%3zu: exponent %.2f\n",
                  label.c_str(), part.front().busy, part.back().busy, busy.back(), 1e6 * t[t.size() / 2],
                  part.size(), beta.back());
    }
    const double p90_busy = referral_p90(pairs, [](const Pair& p) { return std::min(1.0, p.busy); });
    double best_single = INFINITY;
    for (double b : {0.5, 0.66, 0.76}) {
      const double p = referral_p90(pairs, [b](const Pair&) { return b; });
      std::printf("%-24s shuffled referred to the listed clock with one exponent %.2f: p90 %.1f%%\n",
                  label.c_str(), b, 100 * p);
      best_single = std::min(best_single, p);
    }
    std::printf("%-24s shuffled referred with each shape's busy share: p90 %.1f%%\n", label.c_str(),
                100 * p90_busy);
    // 2026-12-06, three starts: the least busy sixth (median 0.37-0.38, ~17 µs) 0.36-0.41, the others
    // 0.60-0.79; each sixth within 0.15 of its median busy share; referral p90 4.9-5.5% with the busy
    // share against 5.6-6.0% with the best single exponent (0.66). The fourth start, after: 0.41-0.43
    // and 0.62-0.77; p90 5.1% (both pairs) against 5.9-6.0%.
    EXPECT_LT(beta.front(), 0.5) << label;
    for (int g = 1; g < kGroups; ++g) EXPECT_GT(beta[std::size_t(g)], beta.front() + 0.15) << label;
    for (int g = 0; g < kGroups; ++g)
      EXPECT_LT(std::fabs(beta[std::size_t(g)] - busy[std::size_t(g)]), 0.2) << label;
    EXPECT_LT(p90_busy, best_single) << label;
  }
}

}  // namespace
}  // namespace infraplan::hw
