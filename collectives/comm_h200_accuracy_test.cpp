// Predicted vs measured NCCL collectives on 2 H200s of one host (docs/data/h200x2_nccl.json:
// infraplan-calibrate comm, nccl-tests definitions, 8 B … 4 GiB). The model uses its default
// constants (datasheet NVLink bandwidth, NCCL's latency table), not the run's fits: this is the
// check of the NCCL-faithful model itself. The table goes to docs/accuracy.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collectives/comm_model.hpp"
#include "collectives/comm_refit.hpp"
#include "common/json_util.hpp"

namespace infraplan::coll {
namespace {

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::size_t(std::lround(q * double(v.size() - 1)))];
}

TEST(CommAccuracy, NcclOnTwoH200) {
  const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/h200x2_nccl.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const Json d = read_json_file(path);
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 2;
  CommModel model(c);
  // Size classes: latency-bound (< 1 MiB), between, bandwidth-bound (>= 64 MiB).
  const char* classes[] = {"< 1 MiB", "1-64 MiB", ">= 64 MiB"};
  std::map<std::string, std::array<std::vector<double>, 3>> err;  // signed relative errors
  std::printf("| op | size | measured | predicted | error | algorithm |\n|---|---|---|---|---|---|\n");
  for (const auto& r : d.at("comm").at("rows")) {
    const std::string op = r.at("op").get<std::string>();
    const double bytes = r.at("bytes").get<double>(), meas = r.at("time_us").get<double>() * 1e-6;
    const CollectiveEstimate e = model.estimate(parse_op(op), bytes, {0, 1});
    const double rel = (e.seconds - meas) / meas;
    const int cls = bytes < 1048576 ? 0 : bytes < 67108864 ? 1 : 2;
    err[op][std::size_t(cls)].push_back(rel);
    if (bytes == 8 || bytes == 1048576 || bytes == 67108864 || bytes >= 4294967296.0 - 64)
      std::printf("| %s | %.0f B | %.1f us | %.1f us | %+.1f%% | %s / %s |\n", op.c_str(), bytes, meas * 1e6,
                  e.seconds * 1e6, 100 * rel, algorithm_name(e.algorithm), protocol_name(e.protocol));
  }
  std::printf("\n| op | %s | %s | %s |\n|---|---|---|---|\n", classes[0], classes[1], classes[2]);
  std::vector<double> bw_all;
  for (const auto& [op, by] : err) {
    std::printf("| %s", op.c_str());
    for (int k = 0; k < 3; ++k) {
      std::vector<double> a;
      for (double x : by[std::size_t(k)]) a.push_back(std::fabs(x));
      double med_signed = quantile(by[std::size_t(k)], 0.5);
      std::printf(" | median |err| %.1f%% (signed %+.1f%%), max %.1f%%", 100 * quantile(a, 0.5),
                  100 * med_signed, 100 * *std::max_element(a.begin(), a.end()));
      if (k == 2) bw_all.insert(bw_all.end(), a.begin(), a.end());
    }
    std::printf(" |\n");
  }
  const double med = quantile(bw_all, 0.5), p90 = quantile(bw_all, 0.9);
  std::printf("\nbandwidth-bound (>= 64 MiB), all ops: median |error| %.1f%%, p90 %.1f%%, n = %zu\n",
              100 * med, 100 * p90, bw_all.size());
  // Target (docs/accuracy.md): <= 10% in the bandwidth-bound range. Met for sendrecv (1.0%) and
  // broadcast (1.3%; +74% while the model charged a pipelined chain's hop latency on every 1 MiB
  // slice), not for the others (run of 2026-11-29): all_reduce -12%, alltoall -18%, all_gather
  // and reduce_scatter -28/-29% (NCCL reaches 293 GB/s busbw on 2 GPUs where the model assumes 80%
  // of 450).
  // These bounds guard what the default model reaches today, a few points above it, against
  // regressions; a profile's measured fits (infraplan calibrate comm) replace the defaults.
  const std::map<std::string, double> bound = {{"all_reduce", 0.15},     {"sendrecv", 0.05},
                                               {"alltoall", 0.21},       {"all_gather", 0.31},
                                               {"reduce_scatter", 0.32}, {"broadcast", 0.05}};
  for (const auto& [op, by] : err) {
    std::vector<double> a;
    for (double x : by[2]) a.push_back(std::fabs(x));
    ASSERT_FALSE(a.empty()) << op;
    EXPECT_LE(quantile(a, 0.5), bound.at(op)) << op;
  }
}

// The refit (collectives/comm_refit.hpp) on the calibration sweep: fitted on the sizes 2^even,
// checked on the sizes 2^odd it never saw (the same run: calibration data split in two, not a
// validation on other data). Targets (docs/accuracy.md): median |error| <= 10% from 64 MiB,
// <= 20% below 1 MiB, for every op.
TEST(CommAccuracy, RefitOnTwoH200HeldOutSizes) {
  const std::string path = std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/h200x2_nccl.json";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const Json d = read_json_file(path);
  hw::Cluster c = hw::cluster_preset("dgx-h200", 1);
  c.gpus_per_node = 2;
  std::vector<MeasuredCollective> fit_rows, check_rows;
  for (const auto& r : d.at("comm").at("rows")) {
    MeasuredCollective m{parse_op(r.at("op").get<std::string>()), {0, 1}, r.at("bytes").get<double>(),
                         r.at("time_us").get<double>() * 1e-6};
    (int(std::lround(std::log2(m.bytes))) % 2 == 0 ? fit_rows : check_rows).push_back(m);
  }
  const RefitResult fit = refit_comm_profile(c, CommProfile{}, fit_rows);
  std::printf("| op | scope | efficiency LL / LL128 / Simple | latency (measured, extra) | in-sample median |\n"
              "|---|---|---|---|---|\n");
  for (const auto& s : fit.summary) {
    double lat = 0, extra = 0;
    for (const auto& l : fit.profile.latency_fits)
      if (l.op == s.op && l.inter == s.inter) lat = l.latency_us, extra = l.extra_us;
    std::printf("| %s | %s | %.3f / %.3f / %.3f | %.1f us (%+.1f) | %.1f%% |\n", op_name(s.op),
                s.inter ? "inter" : "intra", s.efficiency[0], s.efficiency[1], s.efficiency[2], lat, extra,
                100 * s.median_abs_error);
  }
  const std::vector<double> pred = model_seconds(c, fit.profile, check_rows);
  const std::vector<double> pred_default = model_seconds(c, CommProfile{}, check_rows);
  std::map<std::string, std::array<std::vector<double>, 3>> err, err_default;
  for (std::size_t i = 0; i < check_rows.size(); ++i) {
    const auto& r = check_rows[i];
    const int cls = r.bytes < 1048576 ? 0 : r.bytes < 67108864 ? 1 : 2;
    err[op_name(r.op)][std::size_t(cls)].push_back(std::fabs(pred[i] / r.seconds - 1));
    err_default[op_name(r.op)][std::size_t(cls)].push_back(std::fabs(pred_default[i] / r.seconds - 1));
  }
  std::printf("\nheld-out sizes (2^odd), median |error| refitted (default constants):\n"
              "| op | < 1 MiB | 1-64 MiB | >= 64 MiB |\n|---|---|---|---|\n");
  for (const auto& [op, by] : err) {
    std::printf("| %s", op.c_str());
    for (int k = 0; k < 3; ++k)
      std::printf(" | %.1f%% (%.1f%%)", 100 * quantile(by[std::size_t(k)], 0.5),
                  100 * quantile(err_default[op][std::size_t(k)], 0.5));
    std::printf(" |\n");
  }
  for (const auto& [op, by] : err) {
    EXPECT_LE(quantile(by[2], 0.5), 0.10) << op << " bandwidth-bound";
    EXPECT_LE(quantile(by[0], 0.5), 0.20) << op << " below 1 MiB";
  }
}

}  // namespace
}  // namespace infraplan::coll
