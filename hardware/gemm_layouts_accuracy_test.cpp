// GEMMs through PyTorch in the three layouts of a training step (forward F.linear, input gradient
// dY·W, weight gradient dYᵀ·X) against the embedded H200 profile: the linear layers of LLaMA-3 8B /
// 70B, Qwen2.5-7B and Mistral-7B at tensor parallelism 1-8 and 256-8192 tokens, timed from
// CUDA-graph replays on two machine starts (bench/pytorch/gemm_layouts.py,
// docs/data/h200_pytorch_gemm_layouts_run*.json). Split by weight shape: every other distinct
// (out, in) linear, in sorted order, is the validation half; the fit half is what calibration
// choices may look at (docs/accuracy.md, "GEMMs through PyTorch in three layouts").
// INFRAPLAN_GEMM_ROWS=1 prints every row; INFRAPLAN_GEMM_REPLAY_ISOLATED=1 starts every shape of the
// harness replay from an idle board (no history of the shapes before it); INFRAPLAN_GEMM_PROFILE=FILE
// evaluates that profile instead of the embedded one (e.g. an older one, for comparison).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json_util.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/gemm_split_test_support.hpp"
#include "hardware/power_limiter.hpp"
#include "hardware/validation_error_test_support.hpp"

namespace infraplan::hw {
namespace {

struct Row {
  GemmShape shape;
  std::int64_t out = 0, in = 0;  ///< the linear layer's weight [out, in]
  double measured = 0;           ///< PyTorch seconds
  bool validation = false;
};

std::vector<Row> load_rows(const std::string& file) {
  const Json j = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/" + file);
  const std::set<LinearWeight> validation = validation_weights(j);
  std::vector<Row> rows;
  for (const auto& e : j.at("shapes")) {
    Row r;
    r.shape.m = e["m"].get<std::int64_t>(), r.shape.n = e["n"].get<std::int64_t>();
    r.shape.k = e["k"].get<std::int64_t>();
    r.shape.layout = *parse_gemm_layout(e["layout"].get<std::string>());
    std::tie(r.out, r.in) = linear_weight(e);
    r.measured = e["seconds"].get<double>();
    r.validation = validation.count(linear_weight(e)) > 0;
    rows.push_back(r);
  }
  return rows;
}

struct Stats {
  std::size_t n = 0;
  double median = 0, p90 = 0, max = 0, signed_median = 0;
};

Stats stats(std::vector<double> signed_err) {
  Stats s;
  s.n = signed_err.size();
  if (s.n == 0) return s;
  std::vector<double> a;
  for (double e : signed_err) a.push_back(std::fabs(e));
  std::sort(a.begin(), a.end());
  std::sort(signed_err.begin(), signed_err.end());
  auto q = [](const std::vector<double>& v, double f) {
    double x = f * double(v.size() - 1);
    std::size_t lo = std::size_t(std::floor(x)), hi = std::size_t(std::ceil(x));
    return v[lo] + (v[hi] - v[lo]) * (x - double(lo));
  };
  s.median = q(a, 0.5), s.p90 = q(a, 0.9), s.max = a.back(), s.signed_median = q(signed_err, 0.5);
  return s;
}

/// Signed relative errors (predicted / measured − 1) of one layout and split; kernels ≥ 10 µs.
template <class Predict>
Stats errors(const std::vector<Row>& rows, GemmLayout l, bool validation, Predict&& predict) {
  std::vector<double> e;
  for (const Row& r : rows)
    if (r.shape.layout == l && r.validation == validation && r.measured >= 10e-6)
      e.push_back(predict(r.shape) / r.measured - 1);
  return stats(e);
}

const CalibratedCostModel& h200() {
  static const auto cm = make_calibrated_cost_model(
      "h200-sxm-141gb", std::getenv("INFRAPLAN_GEMM_PROFILE") ? std::getenv("INFRAPLAN_GEMM_PROFILE") : "");
  return *cm;
}

/// The clock the small shapes of the PyTorch runs ran at (nvidia-smi: 1980 MHz below ~250 W), for
/// the diagnostic column: the model asked at that clock instead of its reference clock.
constexpr double kMaxClockMhz = 1980;

/// The clock the board's power law (profile "power") gives this GEMM run back to back on its own
/// (`infraplan cost --clock held`).
double law_mhz(const GemmShape& s) { return h200().gemm_held_clock_mhz(s); }

/// The model driven through the timing harness's own schedule (diagnostic): bench/pytorch/gemm_layouts.py
/// times the shapes one after another in file order, each as a graph of `calls` calls (enough for
/// ~100 µs, at least one per operand copy), two warm-up calls and one replay first, then samples of
/// one replay behind a ~30 µs spin until at least 5 samples and 2 ms, the median per call; between
/// shapes the host allocates operands and captures the graph (the run's wall time less its GEMM
/// time, spread evenly). The board's power limiter (profile "power": the law and the time constant
/// fitted on its GEMM/idle mixtures) follows that schedule: each shape runs at the top clock until the
/// running average of power reaches the limit, then at the clock the law gives it held alone.
std::vector<double> harness_replay(const std::vector<Row>& rows, double run_seconds) {
  const CalibratedCostModel& cm = h200();
  const PowerModel& law = *cm.power_model();
  constexpr double kL2Bytes = 60e6;  // the script's L2_BYTES
  struct Plan {
    double top_s, capped_s, top_w;
    long calls;
  };
  std::vector<Plan> plans;
  double gemm_seconds = 0;
  for (const Row& r : rows) {
    const GemmShape& s = r.shape;
    const double t = cm.gemm(s).seconds, top = t / cm.clock_factor(s.dtype, kMaxClockMhz);
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const double bytes = 2.0 * double(s.m * s.k + s.n * s.k + s.m * s.n);
    PowerDemand d;
    d.tflops16 = flops / top * 1e-12, d.TBps = bytes / top * 1e-12;
    const long copies = std::max(1L, std::min(16L, long(3 * kL2Bytes / bytes) + 1));
    const double est = std::max({flops / 600e12, bytes / 3.5e12, 3e-6});
    const long calls = std::max(copies, std::min(128L, long(std::ceil(100e-6 / est))));
    plans.push_back({top, t / cm.clock_factor(s.dtype, law.sustained_clock_mhz(d)),
                     law.power_w(d, law.max_clock_mhz()), calls});
    const double g = double(calls) * r.measured;
    gemm_seconds += g * (1 + std::min(30.0, std::max(5.0, std::ceil(2e-3 / g)))) + 2 * r.measured;
  }
  const double gap = std::max(0.0, (run_seconds - gemm_seconds) / double(rows.size()));
  const bool isolated = std::getenv("INFRAPLAN_GEMM_REPLAY_ISOLATED") != nullptr;
  PowerLimiter lim(law.limit_w(), cm.idle_power_w(), cm.power_limiter_tau_s());
  std::vector<double> out;
  for (const Plan& p : plans) {
    const double n = double(p.calls);
    lim.idle(isolated ? 10.0 : gap);  // 10 s: the limiter's running average back at idle
    lim.run({p.top_w, (2 + n) * p.top_s, (2 + n) * p.capped_s});
    std::vector<double> samples;
    double total = 0;
    for (int it = 0; it < 30 && (it < 5 || total <= 2e-3); ++it) {
      lim.idle(30e-6);
      const double sec = lim.run({p.top_w, n * p.top_s, n * p.capped_s}).seconds;
      samples.push_back(sec / n), total += sec;
    }
    std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 2), samples.end());
    out.push_back(samples[samples.size() / 2]);
  }
  return out;
}

// The seventh H200 start (2026-12-07, GPU-b79992bc): the PyTorch sweep of bench/calib/rows_held_device.sh,
// the same script and shapes as the others (path relative to docs/data).
constexpr const char* kSeventhStart = "calib/h200_rows_held/torch_short.json";
// The eighth (2026-12-07, GPU-19b01df2), the same script; none of its rows are in the profile.
constexpr const char* kEighthStart = "calib/h200_rows_held_run2/torch_short.json";

TEST(GemmLayoutsThroughPyTorch, FitAndValidationByLayout) {
  const bool print_rows = std::getenv("INFRAPLAN_GEMM_ROWS") != nullptr;
  std::map<std::string, Stats> val_model;
  std::vector<Stats> replay_val;  // the harness replay on the validation half, every run and layout
  std::vector<std::pair<double, double>> by_size[4];  // signed medians {top clock, law alone} per run
  // log(harness replay / measured) per shape (kernels >= 10 µs) and run: what the clock state of the
  // harness leaves, for the cross-start decomposition below.
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::vector<double>> left_by_shape;
  int runs_read = 0;
  for (const char* file : {"h200_pytorch_gemm_layouts_run1.json", "h200_pytorch_gemm_layouts_run2.json",
                           "h200_pytorch_gemm_layouts_run3.json", "h200_pytorch_gemm_layouts_run4.json",
                           "h200_pytorch_gemm_layouts_run5.json", "h200_pytorch_gemm_layouts_run6.json",
                           kSeventhStart, kEighthStart}) {
    std::vector<Row> rows;
    try {
      rows = load_rows(file);
    } catch (const std::exception& e) {
      ADD_FAILURE() << file << ": " << e.what();
      continue;
    }
    const double run_seconds = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/" + file)
                                   .at("run_seconds")
                                   .get<double>();
    // A profile without a power section (INFRAPLAN_GEMM_PROFILE=an older one) has no limiter to walk
    // and no law's clock: those diagnostic columns then read 0 (NaN would hide in the medians).
    const bool has_power = h200().power_model() != nullptr;
    const std::vector<double> replay = has_power ? harness_replay(rows, run_seconds) : std::vector<double>();
    std::map<const Row*, double> replayed;
    for (std::size_t i = 0; i < replay.size(); ++i) {
      replayed[&rows[i]] = replay[i];
      const GemmShape& s = rows[i].shape;
      auto& v = left_by_shape[{int(s.layout), s.m, s.n, s.k}];
      if (rows[i].measured >= 10e-6 && int(v.size()) == runs_read)
        v.push_back(std::log(replay[i] / rows[i].measured));
    }
    ++runs_read;
    std::printf("\n%s (%zu shapes): |predicted / measured - 1| median / p90 / max (signed median)\n", file,
                rows.size());
    std::printf("%-6s %-11s %-34s %-34s %-26s %-26s\n", "layout", "split", "model (rows, tables)",
                "grid only (no rows)", "model at 1980 MHz (diag.)", "harness replay (diag.)");
    for (GemmLayout l : {GemmLayout::TN, GemmLayout::NN, GemmLayout::NT})
      for (bool validation : {false, true}) {
        Stats m = errors(rows, l, validation, [](const GemmShape& s) { return h200().gemm(s).seconds; });
        Stats g = errors(rows, l, validation, [](const GemmShape& s) { return h200().gemm_from_grid(s).seconds; });
        Stats c = errors(rows, l, validation, [](const GemmShape& s) {
          return h200().gemm(s).seconds / h200().clock_factor(s.dtype, kMaxClockMhz);
        });
        std::vector<double> he;
        for (const auto& [r, t] : replayed)
          if (r->shape.layout == l && r->validation == validation && r->measured >= 10e-6)
            he.push_back(t / r->measured - 1);
        const Stats h = stats(he);
        std::printf(
            "%-6s %-11s n=%3zu %5.1f%% / %5.1f%% / %5.1f%% (%+5.1f%%)   %5.1f%% / %5.1f%% / %5.1f%% "
            "(%+5.1f%%)   "
            "%5.1f%% / %5.1f%% (%+5.1f%%)   %5.1f%% / %5.1f%% (%+5.1f%%)\n",
            gemm_layout_name(l), validation ? "validation" : "fit", m.n, 100 * m.median, 100 * m.p90,
            100 * m.max, 100 * m.signed_median, 100 * g.median, 100 * g.p90, 100 * g.max,
            100 * g.signed_median, 100 * c.median, 100 * c.p90, 100 * c.signed_median, 100 * h.median,
            100 * h.p90, 100 * h.signed_median);
        if (validation) replay_val.push_back(h);
        if (validation) val_model[std::string(file) + gemm_layout_name(l)] = m;
      }
    // By kernel time, both layouts and splits: the model at its reference clock, at the top clock
    // (a GPU not yet at its power cap) and at the clock the power law gives the GEMM held alone.
    std::printf("%-14s %-24s %-24s %-24s\n", "kernel time", "reference clock", "1980 MHz", "law's clock alone");
    const double edges[] = {10e-6, 100e-6, 300e-6, 1e-3, 1e9};
    for (int b = 0; b < 4; ++b) {
      std::vector<double> ref, top, law;
      for (const Row& r : rows) {
        if (r.measured < edges[b] || r.measured >= edges[b + 1]) continue;
        const double t = h200().gemm(r.shape).seconds;
        ref.push_back(t / r.measured - 1);
        top.push_back(t / h200().clock_factor(r.shape.dtype, kMaxClockMhz) / r.measured - 1);
        if (has_power)
          law.push_back(t / h200().held_clock_factor(r.shape.dtype, law_mhz(r.shape)) / r.measured - 1);
      }
      const Stats a = stats(ref), c = stats(top), w = stats(law);
      std::printf("%5.0f-%-5.0f us %5.1f%% / %5.1f%% (%+5.1f%%)   %5.1f%% / %5.1f%% (%+5.1f%%)   %5.1f%% / %5.1f%% (%+5.1f%%)\n",
                  1e6 * edges[b], std::min(1e6 * edges[b + 1], 99999.0), 100 * a.median, 100 * a.p90,
                  100 * a.signed_median, 100 * c.median, 100 * c.p90, 100 * c.signed_median, 100 * w.median,
                  100 * w.p90, 100 * w.signed_median);
      by_size[b].push_back({c.signed_median, w.signed_median});
    }
    if (print_rows && has_power)
      for (const Row& r : rows) {
        const CostEstimate e = h200().gemm(r.shape);
        std::printf(
            "  %s %s %lldx%lldx%lld measured %.2f us predicted %.2f us at1980 %.2f us law %.2f us %.0f MHz "
            "replay %.2f us grid %.2f us (%s)\n",
            r.validation ? "val" : "fit", gemm_layout_name(r.shape.layout), (long long)r.shape.m,
            (long long)r.shape.n, (long long)r.shape.k, 1e6 * r.measured, 1e6 * e.seconds,
            1e6 * e.seconds / h200().clock_factor(r.shape.dtype, kMaxClockMhz),
            1e6 * e.seconds / h200().held_clock_factor(r.shape.dtype, law_mhz(r.shape)), law_mhz(r.shape),
            1e6 * replayed.at(&r), 1e6 * h200().gemm_from_grid(r.shape).seconds, e.detail.c_str());
      }
  }
  ASSERT_EQ(val_model.size(), 24u) << "PyTorch GEMM data missing in docs/data";
  // What the harness replay leaves, split into the part every start shares for a shape (its mean over
  // the starts) and what is left of each start (the start's own scatter around that mean): if the
  // shared part dominates, the tail is the shape's, not the machine's or the clock's.
  std::vector<double> shared, own;
  for (const auto& [shape, v] : left_by_shape) {
    if (int(v.size()) != runs_read) continue;
    double mean = 0;
    for (double x : v) mean += x / double(v.size());
    shared.push_back(mean);
    for (double x : v) own.push_back(x - mean);
  }
  auto rms = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x * x;
    return v.empty() ? 0.0 : std::sqrt(s / double(v.size()));
  };
  double shared_mean = 0;
  for (double x : shared) shared_mean += x / double(std::max<std::size_t>(1, shared.size()));
  std::vector<double> shared_centred;
  for (double x : shared) shared_centred.push_back(x - shared_mean);
  std::printf(
      "\nharness replay's residual over %zu shapes timed on all %d starts (log ratio, rms): the shape's own "
      "part (common to every start) %.3f, each start around it %.3f\n",
      shared.size(), runs_read, rms(shared_centred), rms(own));
  if (std::getenv("INFRAPLAN_GEMM_PROFILE")) return;
  // The clock state of the timing harness: short kernels (< 100 µs, each shape held ~2 ms) ran at
  // the top clock, kernels over 1 ms (held tens of ms) near the power law's clock for the GEMM alone
  // (2026-12-02: signed medians -2 … +4% and +2 … +4%); between them the GPU was on its way down.
  // The limiter walked through the harness's schedule accounts for the medians (2026-12-04: validation
  // 3.7-5.7%, signed -3.5 … +1.7%), not for the tail (p90 11.9-15.8%: see docs/accuracy.md).
  ASSERT_EQ(replay_val.size(), 24u);
  for (const Stats& h : replay_val) {
    EXPECT_LT(h.median, 0.065);
    EXPECT_LT(std::fabs(h.signed_median), 0.045);
  }
  for (const auto& [top, law] : by_size[0]) EXPECT_LT(std::fabs(top), 0.06);
  // 2026-12-06, six starts: the shape's own part 0.075, each start around it 0.024 — the tail is
  // systematic per shape (docs/accuracy.md, "What the harness replay leaves").
  ASSERT_GE(shared.size(), 600u);
  EXPECT_GT(rms(shared_centred), 2 * rms(own));
  for (const auto& [top, law] : by_size[3]) {
    EXPECT_LT(std::fabs(law), 0.06);
    EXPECT_LT(top, -0.05);
  }
  // The embedded profile on the validation half, every layout and run (2026-12-01: medians 6.6-8.3%,
  // p90 12.8-15.6%, signed +2 to +7%; the fourth start of 2026-12-04: 6.9-8.4%, p90 13.6-15.1%; the
  // 5% / 10% target is not met: docs/accuracy.md says why).
  for (const auto& [what, st] : val_model) {
    EXPECT_LT(st.median, 0.10) << what;
    EXPECT_LT(st.p90, 0.18) << what;
    EXPECT_LT(std::fabs(st.signed_median), 0.10) << what;
  }
}

// The bands of predicted time the GEMM records are kept by (validation_error.gemm.bands): in the
// graph-replay benchmarks they are checked on, kernels of tens of µs run at the top clock and those of
// milliseconds at the power cap, so each size falls on its own side of the model (docs/accuracy.md,
// "Validated error"). Edges chosen by kernel time alone, before any band's quantiles were read.
const std::vector<double> kGemmErrorBands = {30e-6, 100e-6, 300e-6, 1e-3};

void print_record(const char* what, const ValidationError& v) {
  std::printf(
      "%s: measured / predicted p10 %.3f p50 %.3f p90 %.3f over %d fit rows; %ld of %d validation rows "
      "inside\n",
      what, v.p10, v.p50, v.p90, v.rows, std::lround(v.held_out_coverage * v.held_out_rows), v.held_out_rows);
  for (const ValidationBand& b : v.bands)
    std::printf(
        "  predicted %8.1f us and up: p10 %.3f p50 %.3f p90 %.3f over %4d fit rows; %ld of %d validation "
        "rows inside\n",
        1e6 * b.from_s, b.p10, b.p50, b.p90, b.rows, std::lround(b.held_out_coverage * b.held_out_rows),
        b.held_out_rows);
}

struct Coverage {
  int inside_banded = 0, inside_overall = 0;
  std::vector<std::pair<int, int>> by_band;  ///< (inside, rows) per band
};

/// How many of `later` (predicted seconds, measured / predicted) fall inside the interval of their
/// band, and inside the record's one interval.
Coverage coverage(const ValidationError& v, const std::vector<std::pair<double, double>>& later) {
  Coverage c;
  c.by_band.assign(v.bands.size(), {0, 0});
  for (const auto& [t, q] : later) {
    const ValidationBand* b = v.band_of(t);
    const ValidationQuantiles& band = b ? static_cast<const ValidationQuantiles&>(*b) : v;
    const bool in = q >= band.p10 && q <= band.p90;
    c.inside_banded += in;
    c.inside_overall += q >= v.p10 && q <= v.p90;
    if (b) {
      auto& [inside, rows] = c.by_band[std::size_t(b - v.bands.data())];
      inside += in, ++rows;
    }
  }
  return c;
}

// The profile's record of how far GEMMs through PyTorch fell from the model
// (validation_error.gemm, hardware/validation_error.hpp): measured / predicted over the fit half of
// the three runs (kernels >= 10 µs, every layout), its 10th / 50th / 90th percentiles, and the share
// of the validation half inside [p10, p90]. Recomputed here; the test fails when the record no longer
// describes the model. INFRAPLAN_WRITE_VALIDATION_ERROR=DIR writes DIR/gemm.json for
// bench/calib/validation_error_to_profile.py instead.
TEST(GemmLayoutsThroughPyTorch, ValidationErrorOfTheProfileIsCurrent) {
  std::vector<std::pair<double, double>> fit, held;  // (predicted seconds, measured / predicted)
  for (const char* file : {"h200_pytorch_gemm_layouts_run1.json", "h200_pytorch_gemm_layouts_run2.json",
                           "h200_pytorch_gemm_layouts_run3.json"})
    for (const Row& r : load_rows(file))
      if (r.measured >= 10e-6) {
        const double t = h200().gemm(r.shape).seconds;
        (r.validation ? held : fit).push_back({t, r.measured / t});
      }
  ASSERT_GE(fit.size(), 1000u);
  const ValidationError v = validation_error_by_time(
      fit, held, "bf16 GEMMs through PyTorch (forward, input and weight gradient layouts, >= 10 us)",
      kGemmErrorBands);
  print_record("GEMMs", v);
  EXPECT_GE(v.held_out_coverage, 0.7);
  for (const ValidationBand& b : v.bands) EXPECT_GE(b.held_out_coverage, 0.7) << b.from_s;
  // Machine starts the record has never seen (2026-12-04, GPU-8a14b230; 2026-12-05, GPU-988c5021 and
  // GPU-0099ad6b; 2026-12-07, GPU-b79992bc and GPU-19b01df2): both halves of each run, each kernel
  // against the interval of its band (what `infraplan cost` prints) and against the one interval for
  // every size.
  for (const char* file : {"h200_pytorch_gemm_layouts_run4.json", "h200_pytorch_gemm_layouts_run5.json",
                           "h200_pytorch_gemm_layouts_run6.json", kSeventhStart, kEighthStart}) {
    std::vector<std::pair<double, double>> later;
    for (const Row& r : load_rows(file))
      if (r.measured >= 10e-6) {
        const double t = h200().gemm(r.shape).seconds;
        later.push_back({t, r.measured / t});
      }
    ASSERT_GE(later.size(), 1000u) << file;
    const Coverage c = coverage(v, later);
    std::printf(
        "%s (unseen start): %d of %zu kernels inside their band's [p10, p90] (%.1f%%; one interval "
        "for every size: %.1f%%); by band:",
        file, c.inside_banded, later.size(), 100.0 * c.inside_banded / double(later.size()),
        100.0 * c.inside_overall / double(later.size()));
    for (std::size_t i = 0; i < c.by_band.size(); ++i)
      std::printf(" %d/%d", c.by_band[i].first, c.by_band[i].second);
    std::printf("\n");
    EXPECT_GE(double(c.inside_banded) / double(later.size()), 0.7) << file;
    for (const auto& [in, n] : c.by_band) EXPECT_GE(in, 0.6 * n) << file;
  }
  if (std::getenv("INFRAPLAN_GEMM_PROFILE")) return;
  if (write_validation_error_record(
          "gemm", v,
          {"docs/data/h200_pytorch_gemm_layouts_run{1,2,3}.json, fit half (three machine starts)",
           "the validation half of the same runs (every other weight shape)",
           "hardware_tests --gtest_filter='*ValidationError*'"}))
    return;
  expect_validation_error_current(h200().profile(), "gemm", v, 0.03,
                                  "hardware/gemm_layouts_accuracy_test.cpp");
}

// The H100 profile's own GEMM record (its profile is derived from the H200's; the H200's record does
// not carry over): measured / predicted over the fit half of the H100's PyTorch run (2026-12-05,
// docs/data/h100_pytorch_gemm_layouts_run1.json, kernels >= 10 µs, every layout), checked on the
// validation half of the same run (every other weight shape: one machine start only, so the
// coverage says nothing of another H100). INFRAPLAN_WRITE_VALIDATION_ERROR=DIR writes
// DIR/h100-sxm5-80gb/gemm.json for bench/calib/validation_error_to_profile.py (then
// INFRAPLAN_REGENERATE_PROFILES=1 ... DerivedFilesAreUpToDate keeps it in the derived file).
TEST(GemmLayoutsThroughPyTorch, ValidationErrorOfTheH100ProfileIsItsOwn) {
  static const auto h100 = make_calibrated_cost_model("h100-sxm5-80gb");
  std::vector<std::pair<double, double>> fit, held;  // (predicted seconds, measured / predicted)
  for (const Row& r : load_rows("h100_pytorch_gemm_layouts_run1.json"))
    if (r.measured >= 10e-6) {
      const double t = h100->gemm(r.shape).seconds;
      (r.validation ? held : fit).push_back({t, r.measured / t});
    }
  ASSERT_GE(fit.size(), 500u);
  ASSERT_GE(held.size(), 500u);
  const ValidationError v = validation_error_by_time(
      fit, held,
      "bf16 GEMMs through PyTorch on one H100 (forward, input and weight gradient layouts, >= 10 us)",
      kGemmErrorBands);
  print_record("H100 GEMMs", v);
  EXPECT_GE(v.held_out_coverage, 0.7);
  // A second H100 start (2026-12-06, GPU-55322dbb), never used for the record.
  std::vector<std::pair<double, double>> later;
  std::vector<double> err;  // predicted / measured − 1
  for (const Row& r : load_rows("h100_pytorch_gemm_layouts_run2.json"))
    if (r.measured >= 10e-6) {
      const double t = h100->gemm(r.shape).seconds;
      later.push_back({t, r.measured / t});
      err.push_back(t / r.measured - 1);
    }
  const Stats e = stats(err);
  ASSERT_GE(later.size(), 1000u);
  const Coverage c = coverage(v, later);
  std::printf(
      "h100_pytorch_gemm_layouts_run2.json (unseen start): %d of %zu kernels inside their band's [p10, p90] "
      "(%.1f%%; one interval for every size: %.1f%%); |predicted / measured - 1| median %.1f%%, p90 %.1f%%\n",
      c.inside_banded, later.size(), 100.0 * c.inside_banded / double(later.size()),
      100.0 * c.inside_overall / double(later.size()), 100 * e.median, 100 * e.p90);
  EXPECT_GE(c.inside_banded, 0.6 * double(later.size()));
  if (write_validation_error_record(
          "gemm", v,
          {"docs/data/h100_pytorch_gemm_layouts_run1.json, fit half (one machine start)",
           "the validation half of the same run (every other weight shape)",
           "hardware_tests --gtest_filter='*ValidationError*'"},
          "h100-sxm5-80gb"))
    return;
  expect_validation_error_current(h100->profile(), "gemm", v, 0.03,
                                  "hardware/gemm_layouts_accuracy_test.cpp");
}

}  // namespace
}  // namespace infraplan::hw
