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
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/json_util.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/gemm_split_test_support.hpp"

namespace infraplan::hw {
namespace {

using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;  // layout, m, n, k

/// A run's times by shape (or another per-shape `field`, e.g. "hold_duty"); with `validation_only`,
/// the shapes of the validation half's weights only (hardware/gemm_split_test_support.hpp).
std::map<Key, double> load(const std::string& start, const std::string& run, bool validation_only = false,
                           const char* field = "seconds") {
  const Json j =
      read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/calib/" + start + "/" + run + ".json");
  const std::set<LinearWeight> val = validation_only ? validation_weights(j) : std::set<LinearWeight>{};
  std::map<Key, double> out;
  for (const auto& e : j.at("shapes"))
    if (!validation_only || val.count(linear_weight(e)))
      out[{e.at("layout").get<std::string>(), e.at("m").get<std::int64_t>(), e.at("n").get<std::int64_t>(),
           e.at("k").get<std::int64_t>()}] = e.at(field).get<double>();
  return out;
}

/// Kernel-time bins (seconds) of the held probes' tables.
constexpr double kBins[] = {10e-6, 30e-6, 100e-6, 300e-6, 1e-3, 1.0};

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

GemmShape shape_of(const Key& k) {
  GemmShape sh;
  sh.layout = *parse_gemm_layout(std::get<0>(k));
  sh.m = std::get<1>(k), sh.n = std::get<2>(k), sh.k = std::get<3>(k);
  return sh;
}

/// The derived H100 profile (the order and held probes ran on H100s), built once.
const CalibratedCostModel& h100() {
  static const auto cm = make_calibrated_cost_model("h100-sxm5-80gb");
  return *cm;
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
             torch_b = load("h100_order_probe_run3", "torch_b"),
             shuffled = load("h100_order_probe_run3", "torch_shuffled");
  const Gap g = gap(torch_a, shuffled), g_b = gap(torch_b, shuffled);
  print("h100_order_probe_run3", "PyTorch, listed vs shuffled order (a)", g);
  print("h100_order_probe_run3", "PyTorch, listed vs shuffled order (b)", g_b);
  ASSERT_GE(g.n, 1300u);
  // 2026-12-06: 4.6% / 14.6% (both listed runs), against 0.8% / 4.1% between the two listed runs.
  EXPECT_GT(g.p90, 0.12);
  EXPECT_GT(g.p90, 2.5 * gap(torch_a, torch_b).p90);
  // One answer per shape cannot be within 10% of both orders' p90 unless it sits between them: the
  // derived H100 profile, which answers at its reference clock, against each order.
  std::map<Key, double> model;
  for (const auto& [k, t] : torch_a) model[k] = h100().gemm(shape_of(k)).seconds;
  const Gap listed_err = gap(torch_a, model), shuffled_err = gap(shuffled, model);
  print("h100_order_probe_run3", "H100 profile vs PyTorch, listed order", listed_err);
  print("h100_order_probe_run3", "H100 profile vs PyTorch, shuffled order", shuffled_err);
  EXPECT_LT(listed_err.median, 0.12);
  EXPECT_LT(shuffled_err.median, 0.12);
}

/// The model's answer for `sh` at its reference clock, at the top clock, and at the clock its power
/// law gives the GEMM held alone (`infraplan cost --clock reference|top|held`).
struct Answers {
  double reference = 0, top = 0, held = 0;
};

/// The model's answer for `sh` at the clock its power law gives the GEMM when it runs `duty` of the
/// time (`infraplan cost --clock held [--duty F]`).
double held_answer(const CalibratedCostModel& cm, const GemmShape& sh, double duty = 1.0) {
  return cm.gemm_held(sh, duty).seconds;
}

Answers answers(const CalibratedCostModel& cm, const GemmShape& sh) {
  Answers a;
  a.reference = cm.gemm(sh).seconds;
  a.top = a.reference / cm.clock_factor(sh.dtype, cm.power_model()->max_clock_mhz());
  a.held = held_answer(cm, sh);
  return a;
}

/// The model's three answers for every shape a run timed, by shape.
struct AnswerMaps {
  std::map<Key, double> reference, top, held;
};

AnswerMaps answers_for(const CalibratedCostModel& cm, const std::map<Key, double>& run) {
  AnswerMaps out;
  for (const auto& [k, t] : run) {
    const Answers a = answers(cm, shape_of(k));
    out.reference[k] = a.reference, out.top[k] = a.top, out.held[k] = a.held;
  }
  return out;
}

/// The derived H100 profile with the calibrator rows of `start` merged in
/// (docs/data/calib/START/h100_profile_with_rows.json.gz, bench/calib/merge_layout_runs.py, gzip'd).
std::unique_ptr<CalibratedCostModel> rows_profile(const std::string& start) {
  return make_calibrated_cost_model(
      "h100-sxm5-80gb",
      std::string(INFRAPLAN_SOURCE_DIR) + "/docs/data/calib/" + start + "/h100_profile_with_rows.json.gz");
}

// A benchmark that holds each shape (60 ms of replays, the second half kept; two more H100 starts,
// GPU-327e0b76 and GPU-60e52477, docs/data/calib/h100_held_probe*/): the order stops mattering, and
// the model's answer at the clock its power law gives the GEMM held alone is what such a benchmark
// measures.
void check_held_start(const char* s) {
  const auto short_a = load(s, "torch_short"), short_b = load(s, "torch_short_b");
  const auto held = load(s, "torch_held"), held_shuffled = load(s, "torch_held_shuffled");
  const Gap repeat = gap(short_a, short_b), orders = gap(held, held_shuffled), state = gap(short_a, held);
  print(s, "PyTorch ~2 ms per shape, twice", repeat);
  print(s, "PyTorch held 60 ms, listed vs shuffled", orders);
  print(s, "PyTorch ~2 ms vs held 60 ms, listed", state);
  ASSERT_GE(orders.n, 1300u) << s;
  // 2026-12-06: held, listed vs shuffled 1.7% / 6.2% — against 4.6% / 14.6% for ~2 ms per shape on
  // the third start; ~2 ms vs held 4.9% / 11.8% (held slower, +3.5% signed).
  EXPECT_LT(orders.median, 0.03);
  EXPECT_LT(orders.p90, 0.09);
  EXPECT_GT(state.p90, orders.p90);
  ASSERT_NE(h100().power_model(), nullptr) << s;
  const AnswerMaps priced = answers_for(h100(), held);
  const auto &ref = priced.reference, &top = priced.top, &law = priced.held;
  for (const auto& [name, run] : {std::pair{"~2 ms, listed", &short_a}, std::pair{"held, listed", &held},
                                  std::pair{"held, shuffled", &held_shuffled}}) {
    print(s, (std::string("H100 profile at its reference clock vs ") + name).c_str(), gap(*run, ref));
    print(s, (std::string("H100 profile at the top clock vs ") + name).c_str(), gap(*run, top));
    print(s, (std::string("H100 profile at the law's held clock vs ") + name).c_str(), gap(*run, law));
  }
  // 2026-12-06 (derived H100 profile, whose own tail is ~19% p90 on this GPU): against the held
  // benchmarks the held answer is 4.5-4.7% / 13.7-14.9% (with the held exponent; 4.6-5.1% /
  // 14.2-15.0% with the grid's), the reference clock's 7.8-8.0% / 18.4-18.5%.
  for (const auto* run : {&held, &held_shuffled}) {
    const Gap at_law = gap(*run, law), at_ref = gap(*run, ref);
    EXPECT_LT(at_law.median, 0.06);
    EXPECT_LT(at_law.median, at_ref.median - 0.02);
    EXPECT_LT(at_law.p90, at_ref.p90);
  }
}

TEST(GemmBenchmarkOrder, HeldShapesDoNotDependOnTheOrder) {
  for (const char* s : {"h100_held_probe", "h100_held_probe_run2"}) check_held_start(s);
}

// The H200's own held GEMMs: the power probe held each of its GEMMs back to back for 3 s after rest
// (profile "power", docs/calibration.md) and timed the second half. Its held-out bf16 GEMMs were used
// for nothing but checking the law's clock; their held times check `--clock held` on the H200.
TEST(GemmBenchmarkOrder, HeldAnswerAgainstTheH200PowerProbe) {
  const auto h200 = make_calibrated_cost_model("h200-sxm-141gb");
  ASSERT_TRUE(h200->profile().power.has_value());
  std::vector<double> held_err, ref_err;
  for (const auto& q : h200->profile().power->points) {
    if (q.role != "holdout" || q.eight_bit || !(q.sustained_seconds > 0)) continue;
    char layout[8] = {};
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(q.label.c_str(), "gemm bf16 %lldx%lldx%lld %7s", &m, &n, &k, layout) != 4) continue;
    GemmShape sh;
    sh.m = m, sh.n = n, sh.k = k;
    sh.layout = *parse_gemm_layout(layout);
    const Answers a = answers(*h200, sh);
    held_err.push_back(std::fabs(a.held / q.sustained_seconds - 1));
    ref_err.push_back(std::fabs(a.reference / q.sustained_seconds - 1));
    std::printf("%-34s held %8.1f us (--clock held %8.1f, %+5.1f%%; reference clock %+5.1f%%)\n",
                q.label.c_str(), 1e6 * q.sustained_seconds, 1e6 * a.held,
                100 * (a.held / q.sustained_seconds - 1), 100 * (a.reference / q.sustained_seconds - 1));
  }
  ASSERT_GE(held_err.size(), 8u);
  std::sort(held_err.begin(), held_err.end());
  std::sort(ref_err.begin(), ref_err.end());
  const double held_median = held_err[held_err.size() / 2], ref_median = ref_err[ref_err.size() / 2];
  std::printf(
      "H200 power probe, %zu held-out bf16 GEMMs held alone: --clock held median %.1f%% max %.1f%%; "
      "reference clock median %.1f%% max %.1f%%\n",
      held_err.size(), 100 * held_median, 100 * held_err.back(), 100 * ref_median, 100 * ref_err.back());
  // 2026-12-06: held median 4.7% (upper middle of ten), max 7.5% with the held exponent (6.5% / 9.5%
  // with the grid's), mostly too fast; reference 12.8%, max 16.9%. 2026-12-07: held 4.1% / 7.0%.
  EXPECT_LT(held_median, 0.08);
  EXPECT_LT(held_err.back(), 0.12);
  EXPECT_LT(held_median, ref_median - 0.03);
}

// The same start's calibrator rows (GPU-4970ffd5, 2026-12-06, bench/calib/rows_held_device.sh): its
// `infraplan-calibrate layouts` run merged into the derived H100 profile
// (docs/data/calib/h100_rows_held/h100_profile_with_rows.json.gz, bench/calib/merge_layout_runs.py), then
// PyTorch at ~2 ms and held 60 ms per shape. The PyTorch times are validation data only.
TEST(GemmBenchmarkOrder, HeldAnswerWithTheStartsOwnRows) {
  const char* s = "h100_rows_held";
  const auto own = rows_profile(s);
  ASSERT_NE(own->power_model(), nullptr);
  const auto held = load(s, "torch_held", true), short_run = load(s, "torch_short", true);
  ASSERT_GE(held.size(), 600u);
  const AnswerMaps with_rows = answers_for(*own, held), derived = answers_for(h100(), held);
  const auto &ref = with_rows.reference, &law = with_rows.held;
  const auto &derived_ref = derived.reference, &derived_law = derived.held;
  const Gap own_held = gap(held, law), own_ref = gap(held, ref), derived_held = gap(held, derived_law);
  print(s, "validation half, held: own rows, --clock held", own_held);
  print(s, "validation half, held: own rows, reference", own_ref);
  print(s, "validation half, held: derived, --clock held", derived_held);
  print(s, "validation half, held: derived, reference", gap(held, derived_ref));
  print(s, "validation half, ~2 ms: own rows, --clock held", gap(short_run, law));
  print(s, "validation half, ~2 ms: own rows, reference", gap(short_run, ref));
  // 2026-12-06: the held answer with the start's rows 5.6% / 10.9% (5.0% / 9.9% with the grid's
  // exponent; the benchmark idles part of the time, which the back-to-back answer does not know:
  // "HeldAnswerAtTheBenchmarksMeasuredDuty") against the held benchmark, the derived profile's
  // 4.8% / 14.5%: its tail is the rows it lacks
  // (thin shapes, k or n <= 128, 30-70% off on the grid alone). Against ~2 ms per shape the reference
  // clock is nearer (5.8% / 12.6%; held 8.6% / 14.0%). Since 2026-12-08 the committed H100 profile
  // carries rows timed held on another start (tables.gemm_held_rows, GPU-bbbb95aa), which answer
  // --clock held as measured: 2.7% / 7.1% here, nearer than this start's own shuffled rows through
  // the power law (docs/accuracy.md, "Rows timed held").
  EXPECT_LT(own_held.median, 0.06);
  EXPECT_LT(own_held.p90, 0.12);
  EXPECT_LT(derived_held.p90, own_held.p90 - 0.02);
  EXPECT_LT(own_held.p90, own_ref.p90);
}

/// The embedded H200 profile against the PyTorch benchmarks of H200 start `s`
/// (bench/calib/rows_held_device.sh: held 60 ms per shape and ~2 ms per shape, listed order;
/// docs/data/calib/S), validation half: prints the held answer against the held benchmark and the reference
/// clock against both, and holds them to the seventh start's state (the 5% / 10% target is not met by either
/// answer on any H200 start). INFRAPLAN_GEMM_PROFILE=FILE answers with another H200 profile.
void check_h200_start(const char* s) {
  static const auto h200 = make_calibrated_cost_model(
      "h200-sxm-141gb", std::getenv("INFRAPLAN_GEMM_PROFILE") ? std::getenv("INFRAPLAN_GEMM_PROFILE") : "");
  const auto held = load(s, "torch_held", true), short_run = load(s, "torch_short", true);
  const AnswerMaps a = answers_for(*h200, held);
  const Gap held_law = gap(held, a.held), short_ref = gap(short_run, a.reference);
  print(s, "PyTorch ~2 ms vs held 60 ms", gap(short_run, held));
  print(s, "validation half, held: --clock held", held_law);
  print(s, "validation half, held: reference", gap(held, a.reference));
  print(s, "validation half, ~2 ms: --clock held", gap(short_run, a.held));
  print(s, "validation half, ~2 ms: reference", short_ref);
  ASSERT_GE(held_law.n, 600u) << s;
  EXPECT_LT(held_law.median, 0.075) << s;
  EXPECT_LT(held_law.p90, 0.14) << s;
  EXPECT_LT(short_ref.median, 0.085) << s;
}

// A seventh H200 start (2026-12-07, GPU-b79992bc; docs/data/calib/h200_rows_held): the profile's rows
// are of four starts since 2026-12-07, this one's among them (before, of two others). Rows of two
// other starts: --clock held 6.5% / 11.9% against the held benchmark (reference 5.5% / 12.2%); against
// ~2 ms per shape the reference clock 7.0% / 12.1% (held 11.1% / 15.9%). With the rows of four starts:
// held 6.3% / 11.3%, reference 5.7% / 12.0%; ~2 ms: reference 6.6% / 11.5%, held 11.2% / 15.1%
// (docs/accuracy.md, "A seventh H200 start", "The rows of four starts").
TEST(GemmBenchmarkOrder, HeldAnswerOnAnH200Start) { check_h200_start("h200_rows_held"); }

// An eighth H200 start (2026-12-07 18:20 UTC, GPU-19b01df2, the same script; docs/data/calib/
// h200_rows_held_run2), none of whose rows are in the profile; the seventh start's bounds. Held 5.9% /
// 11.4% (reference 5.9% / 11.9%); ~2 ms: reference 6.7% / 12.1%, held 10.4% / 15.3% (docs/accuracy.md,
// "An eighth H200 start").
TEST(GemmBenchmarkOrder, HeldAnswerOnAnEighthH200Start) { check_h200_start("h200_rows_held_run2"); }

// Calibrate on one machine start, run on another: the rows of each of two H100 starts
// (h100_rows_held: GPU-4970ffd5; h100_rows_held_run2: GPU-db6ab04d, both 2026-12-06,
// bench/calib/rows_held_device.sh), each merged into the derived profile alone, and both merged
// together (h100_rows_held_both: each point the median of the two starts, each referred by its own
// clock reading), answering each start's held PyTorch benchmark. The PyTorch times are validation
// data only.
TEST(GemmBenchmarkOrder, HeldAnswerWithAnotherStartsRows) {
  const char* const starts[] = {"h100_rows_held", "h100_rows_held_run2"};
  const char* const rows[] = {"h100_rows_held", "h100_rows_held_run2", "h100_rows_held_both"};
  std::vector<std::unique_ptr<CalibratedCostModel>> own;
  for (const char* s : rows) own.push_back(rows_profile(s));
  // The two starts' held benchmarks against each other: the fleet spread the answer meets.
  const auto held_a = load(starts[0], "torch_held", true), held_b = load(starts[1], "torch_held", true);
  const Gap across = gap(held_a, held_b);
  print("both starts", "validation half, held vs held", across);
  ASSERT_GE(across.n, 600u);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t h = 0; h < 2; ++h) {
      const auto& held = h == 0 ? held_a : held_b;
      const AnswerMaps priced = answers_for(*own[r], held);
      const Gap g = gap(held, priced.held), g_ref = gap(held, priced.reference);
      const std::string what = std::string("rows ") + rows[r] + ", held " + starts[h];
      print("", (what + ": --clock held").c_str(), g);
      print("", (what + ": reference").c_str(), g_ref);
      ASSERT_GE(g.n, 600u);
      // 2026-12-06: --clock held 5.5-5.6% / 10.8-10.9% for the pairs (5.0-5.1% / 9.9-10.1% with the
      // grid's exponent), reference 5.2-5.4% / 12.5-12.7%: the rows carry over from one start to the
      // other (held vs held 1.0% / 4.5%). Both starts' rows: 5.5% / 10.7-10.8%.
      EXPECT_LT(g.median, 0.06) << what;
      EXPECT_LT(g.p90, 0.12) << what;
    }
}

/// The two earlier H100 starts' rows (h100_rows_held_both) answering the held and ~2 ms benchmarks of
/// `start` (rows and benchmark from different starts); prints the gaps, with `start`'s held benchmark
/// against `earlier`'s, and returns the `--clock held` answer's gap on the held benchmark.
Gap held_answer_on_another_start(const char* start, const char* earlier) {
  const auto both = rows_profile("h100_rows_held_both");
  const auto held = load(start, "torch_held", true), short_run = load(start, "torch_short", true);
  const AnswerMaps on_held = answers_for(*both, held), on_short = answers_for(*both, short_run);
  const Gap law = gap(held, on_held.held);
  print(start, (std::string("validation half, held vs ") + earlier + "'s held").c_str(),
        gap(held, load(earlier, "torch_held", true)));
  print(start, "validation half, held: --clock held", law);
  print(start, "validation half, held: reference", gap(held, on_held.reference));
  print(start, "validation half, ~2 ms: --clock held", gap(short_run, on_short.held));
  print(start, "validation half, ~2 ms: reference", gap(short_run, on_short.reference));
  return law;
}

// A third H100 start run after both of the above (2026-12-07 09:48 UTC, GPU-67262e39,
// bench/calib/rows_held_device.sh; docs/data/calib/h100_rows_held_run3, its rows never merged into any
// profile): the two earlier starts' rows answering its held and ~2 ms benchmarks — chosen before this
// start ran.
TEST(GemmBenchmarkOrder, HeldAnswerOnAThirdH100Start) {
  const Gap law = held_answer_on_another_start("h100_rows_held_run3", "h100_rows_held");
  ASSERT_GE(law.n, 600u);
  // 2026-12-07: --clock held 5.5% / 11.0% (reference 5.2% / 12.5%), as on the two earlier starts with
  // each other's rows (5.5% / 10.7-10.9%); held vs the first start's held 1.0% / 4.1%; against ~2 ms
  // per shape the reference clock 5.6% / 12.1% (held 9.3% / 14.3%). docs/accuracy.md, "A third H100
  // start".
  EXPECT_LT(law.median, 0.07);
  EXPECT_LT(law.p90, 0.13);
}

// A fourth H100 start (GPU-ed454588, 2026-12-07 13:21 UTC, the same rows_held_device.sh): the rows of
// the first two starts again, on a start none of whose rows were merged.
TEST(GemmBenchmarkOrder, HeldAnswerOnAFourthH100Start) {
  const Gap law = held_answer_on_another_start("h100_rows_held_run4", "h100_rows_held_run3");
  ASSERT_GE(law.n, 600u);
  // 2026-12-07: --clock held 4.3% / 9.0% (reference 6.0% / 13.3%); ~2 ms per shape: reference 5.9% /
  // 13.4%, held 7.4% / 13.4%; held vs the third start's held 2.2% / 5.4%. docs/accuracy.md, "A fourth
  // H100 start". The bounds are the third start's, set before this start's numbers were read.
  EXPECT_LT(law.median, 0.07);
  EXPECT_LT(law.p90, 0.13);
}

// A fifth H100 start (GPU-5e8cf103, 2026-12-07 16:36 UTC, the same rows_held_device.sh;
// docs/data/calib/h100_rows_held_run5): the rows of the first two starts once more, bounds as above.
TEST(GemmBenchmarkOrder, HeldAnswerOnAFifthH100Start) {
  const Gap law = held_answer_on_another_start("h100_rows_held_run5", "h100_rows_held_run4");
  ASSERT_GE(law.n, 600u);
  EXPECT_LT(law.median, 0.07);
  EXPECT_LT(law.p90, 0.13);
}

// Rows timed held (2026-12-08, an H100 start, GPU-bbbb95aa; docs/data/calib/h100_rows_held_listed,
// `infraplan-calibrate layouts --hold-ms 40 --order listed`: each shape replayed for 40 ms, the second
// half kept, its clock read on the GPU between launches of the shape), against the held (40 or 60 ms)
// and ~2 ms PyTorch benchmarks of six H100 starts, five of them other machine starts than the rows'.
// As measured, the held rows are what a held benchmark times on another start; the same start's rows
// timed as the profiles' rows always were (shuffled, ~1.5 ms per shape) are not. Through the model
// (the rows referred to the reference clock, then to the power law's held clock) the held rows lose
// most of that: the law's clock per shape is the limit there (docs/accuracy.md, "Rows timed held").
TEST(GemmBenchmarkOrder, RowsTimedHeldAnswerSixH100Starts) {
  // The calibrator's runs (cuBLAS only) read as the PyTorch sweeps are.
  const auto held_rows = load("h100_rows_held_listed", "layouts_held");
  const auto shuffled_rows = load("h100_rows_held_listed", "layouts");
  const Gap same = gap(load("h100_rows_held_listed", "torch_held"), held_rows);
  print("h100_rows_held_listed", "PyTorch held vs calibrator held", same);
  ASSERT_GE(same.n, 1300u);
  // 2026-12-08: 2.5% / 6.9% (the shuffled rows against the same PyTorch sweep: 5.9% / 15.3%).
  EXPECT_LT(same.median, 0.035);
  EXPECT_LT(same.p90, 0.09);
  const auto model_held_rows = make_calibrated_cost_model(
      "h100-sxm5-80gb", std::string(INFRAPLAN_SOURCE_DIR) +
                            "/docs/data/calib/h100_rows_held_listed/h100_profile_with_held_rows.json.gz");
  for (const char* s : {"h100_rows_held", "h100_rows_held_run2", "h100_rows_held_run3", "h100_rows_held_run4",
                        "h100_rows_held_run5"}) {
    const auto held = load(s, "torch_held", true), short_run = load(s, "torch_short", true);
    const Gap as_measured = gap(held, held_rows), shuffled = gap(held, shuffled_rows);
    print(s, "held: the held rows as measured", as_measured);
    print(s, "held: the shuffled rows as measured", shuffled);
    print(s, "~2 ms: the held rows as measured", gap(short_run, held_rows));
    const AnswerMaps m = answers_for(*model_held_rows, held),
                     m_short = answers_for(*model_held_rows, short_run);
    const AnswerMaps c = answers_for(h100(), held), c_short = answers_for(h100(), short_run);
    print(s, "held: held rows' profile, --clock held", gap(held, m.held));
    const Gap committed = gap(held, c.held);
    print(s, "held: committed profile, --clock held", committed);
    print(s, "~2 ms: held rows' profile, reference", gap(short_run, m_short.reference));
    print(s, "~2 ms: committed profile, reference", gap(short_run, c_short.reference));
    ASSERT_GE(as_measured.n, 600u) << s;
    // 2026-12-08, validation half: 1.7-3.1% / 6.1-7.5% on the five other starts; the shuffled rows
    // 6.0-6.5% / 14.8-15.9%; the held rows' profile with --clock held 4.4-6.9% / 8.7-11.5%.
    EXPECT_LT(as_measured.median, 0.045) << s;
    EXPECT_LT(as_measured.p90, 0.095) << s;
    EXPECT_GT(shuffled.p90, as_measured.p90 + 0.04) << s;
    // The committed H100 profile carries these held rows (tables.gemm_held_rows): its --clock held
    // answers them as measured, 1.7-3.1% / 6.1-7.5% on these five starts (before: 4.3-5.6% / 13.3-14.8%).
    EXPECT_LT(committed.median, 0.045) << s;
    EXPECT_LT(committed.p90, 0.095) << s;
  }
}

/// Median of `value` over the shapes `run` timed in [lo, hi) seconds (0 when none).
double bin_median(const std::map<Key, double>& run, const std::map<Key, double>& value, double lo,
                  double hi) {
  std::vector<double> v;
  for (const auto& [k, t] : run)
    if (auto it = value.find(k); it != value.end() && t >= lo && t < hi) v.push_back(it->second);
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median of log(model / measured) over the shapes `run` timed in [lo, hi) seconds.
double signed_median(const std::map<Key, double>& run, const std::map<Key, double>& model, double lo,
                     double hi) {
  std::vector<double> v;
  for (const auto& [k, t] : run)
    if (auto it = model.find(k); it != model.end() && t >= lo && t < hi)
      v.push_back(std::log(it->second / t));
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The share of GPU time a held sample of bench/pytorch/gemm_layouts.py spends in its GEMMs when
/// each takes `seconds`: a graph of `calls` GEMMs behind a 60,000-cycle spin (30 us at 1,980 MHz);
/// the host's gap between samples is left out, so this is an upper bound.
double benchmark_duty(const Key& k, double seconds) {
  const double m = double(std::get<1>(k)), n = double(std::get<2>(k)), kk = double(std::get<3>(k));
  const double per = (m * kk + n * kk + m * n) * 2, l2_bytes = 60e6;  // the script's constants
  const double copies = std::max(1.0, std::min(16.0, std::floor(3 * l2_bytes / per) + 1));
  const double est = std::max({2 * m * n * kk / 600e12, per / 3.5e12, 3e-6});
  const double calls = std::max(copies, std::min(128.0, std::ceil(100e-6 / std::max(est, 1e-6))));
  const double graph = calls * seconds, spin = 60000 / 1980e6;
  return graph / (graph + spin);
}

// Does a benchmark that holds each shape longer reach another state? (a fifth H100 start,
// GPU-c5c81f55, 2026-12-06 17:41 UTC, docs/data/calib/h100_hold_window_probe/): the 255 LLaMA-shape
// GEMMs of 1,024 tokens through PyTorch held 60 ms, then 600 ms, then 60 ms again per shape, listed
// order. Ten times the hold moves the times by about as much as repeating the 60 ms run: the held
// answer's size trend (short kernels priced slow, the longest fast) is not a window the benchmark
// has not yet settled in. The rows are the two other H100 starts' (h100_rows_held_both).
TEST(GemmBenchmarkOrder, HoldingTenTimesLongerChangesLittle) {
  const char* s = "h100_hold_window_probe";
  const auto h60 = load(s, "h60"), h600 = load(s, "h600"), h60b = load(s, "h60b");
  const Gap repeat = gap(h60, h60b), longer = gap(h60, h600);
  print(s, "held 60 ms, twice", repeat);
  print(s, "held 60 ms vs 600 ms", longer);
  ASSERT_GE(longer.n, 200u);
  // 2026-12-06: 60 vs 600 ms 1.1% / 3.4% (signed +0.4%), 60 ms twice 0.7% / 2.8%.
  EXPECT_LT(longer.median, 0.02);
  EXPECT_LT(longer.p90, 0.05);
  const auto both = rows_profile("h100_rows_held_both");
  const AnswerMaps priced = answers_for(*both, h600);
  print(s, "all shapes, held 600 ms: --clock held", gap(h600, priced.held));
  print(s, "all shapes, held 600 ms: reference", gap(h600, priced.reference));
  const auto& bins = kBins;
  double first = 0, last = 0;
  for (std::size_t b = 0; b + 1 < std::size(bins); ++b) {
    const double at600 = signed_median(h600, priced.held, bins[b], bins[b + 1]);
    const double at60 = signed_median(h60, priced.held, bins[b], bins[b + 1]);
    std::printf("%-24s --clock held, kernels %6.0f-%7.0f us: signed %+5.1f%% (600 ms), %+5.1f%% (60 ms)\n", s,
                1e6 * bins[b], 1e6 * bins[b + 1], 100 * at600, 100 * at60);
    if (b == 0) first = at600;
    last = at600;
  }
  // 2026-12-06: +8.9% (10-30 us) ... -4.2% (> 1 ms) held 600 ms, as held 60 ms (+9.4% ... -4.2%).
  EXPECT_GT(first, 0.04);
  EXPECT_LT(last, 0.0);
  // What the benchmark's own gaps do (a diagnostic): each sample's spin before its graph is idle
  // time the law's back-to-back answer does not have.
  std::map<Key, double> at_duty, duty;
  for (const auto& [k, t] : h600)
    duty[k] = benchmark_duty(k, t), at_duty[k] = held_answer(*both, shape_of(k), duty[k]);
  print(s, "all shapes, held 600 ms: law at the benchmark's duty", gap(h600, at_duty));
  for (std::size_t b = 0; b + 1 < std::size(bins); ++b)
    std::printf("%-24s law at the benchmark's duty (median %.2f), kernels %6.0f-%7.0f us: signed %+5.1f%%\n",
                s, bin_median(h600, duty, bins[b], bins[b + 1]), 1e6 * bins[b], 1e6 * bins[b + 1],
                100 * signed_median(h600, at_duty, bins[b], bins[b + 1]));
  // 2026-12-06: the spin alone (duty 0.85 for the 10-30 us kernels) takes their bias from +8.9% to
  // +5.7% and all shapes from 6.2% / 11.2% to 3.9% / 8.5%; the host's gaps (not timed) add idle time.
  EXPECT_LT(signed_median(h600, at_duty, bins[0], bins[1]), first - 0.02);
  EXPECT_LT(gap(h600, at_duty).median, gap(h600, priced.held).median);
}

/// The measured duty of every held shape of a run (`hold_duty`, bench/pytorch/gemm_layouts.py).
std::map<Key, double> load_duty(const std::string& start, const std::string& run) {
  std::map<Key, double> duty = load(start, run, false, "hold_duty");
  for (auto& [k, d] : duty) {
    EXPECT_TRUE(d > 0 && d <= 1) << run << " " << std::get<0>(k) << " " << std::get<1>(k) << "x"
                                 << std::get<2>(k) << "x" << std::get<3>(k);
    d = std::clamp(d, 1e-3, 1.0);
  }
  return duty;
}

/// The law at each shape's measured duty, for every shape `run` timed.
std::map<Key, double> held_at_duties(const CalibratedCostModel& cm, const std::map<Key, double>& run,
                                     const std::map<Key, double>& duty) {
  std::map<Key, double> out;
  for (const auto& [k, t] : run) out[k] = held_answer(cm, shape_of(k), duty.at(k));
  return out;
}

// The same probe on a sixth H100 start (GPU-f1b4afae, 2026-12-06 17:51 UTC,
// docs/data/calib/h100_hold_duty_probe/: held 60 ms, then 600 ms), with each held shape's duty
// measured by the script (`hold_duty`: the share of the kept samples' wall time in its GEMM graphs).
// The law asked at that duty against the back-to-back `--clock held` answer.
TEST(GemmBenchmarkOrder, HeldAnswerAtTheBenchmarksMeasuredDuty) {
  const char* s = "h100_hold_duty_probe";
  const auto h600 = load(s, "h600"), h60 = load(s, "h60");
  print(s, "held 60 ms vs 600 ms", gap(h60, h600));
  const auto duty = load_duty(s, "h600");
  const auto both = rows_profile("h100_rows_held_both");
  const AnswerMaps priced = answers_for(*both, h600);
  const auto at_duty = held_at_duties(*both, h600, duty);
  const Gap back_to_back = gap(h600, priced.held), measured = gap(h600, at_duty);
  print(s, "all shapes, held 600 ms: --clock held", back_to_back);
  print(s, "all shapes, held 600 ms: law at the measured duty", measured);
  print(s, "all shapes, held 600 ms: reference", gap(h600, priced.reference));
  const auto val = load(s, "h600", true);
  print(s, "validation half, held 600 ms: --clock held", gap(val, priced.held));
  print(s, "validation half, held 600 ms: law at the measured duty", gap(val, at_duty));
  const auto& bins = kBins;
  for (std::size_t b = 0; b + 1 < std::size(bins); ++b)
    std::printf(
        "%-24s kernels %6.0f-%7.0f us (duty %.2f): signed %+5.1f%% back to back, %+5.1f%% at the duty\n", s,
        1e6 * bins[b], 1e6 * bins[b + 1], bin_median(h600, duty, bins[b], bins[b + 1]),
        100 * signed_median(h600, priced.held, bins[b], bins[b + 1]),
        100 * signed_median(h600, at_duty, bins[b], bins[b + 1]));
  ASSERT_GE(measured.n, 200u);
  // 2026-12-06: see docs/accuracy.md ("Held ten times longer").
  EXPECT_LT(measured.median, back_to_back.median);
  EXPECT_LT(std::fabs(signed_median(h600, at_duty, bins[0], bins[1])),
            std::fabs(signed_median(h600, priced.held, bins[0], bins[1])) - 0.02);
}

// The duty answer at the other token counts (a seventh H100 start, GPU-76c46cee, 2026-12-06
// 18:05-18:08 UTC, docs/data/calib/h100_hold_duty_tokens/): the LLaMA-shape GEMMs of 256, 512, 2,048,
// 4,096 and 8,192 tokens held 60 ms each with their duty measured; rows of two other starts.
TEST(GemmBenchmarkOrder, HeldAnswerAtTheMeasuredDutyAcrossTokenCounts) {
  const char* s = "h100_hold_duty_tokens";
  const auto both = rows_profile("h100_rows_held_both");
  std::map<Key, double> all, all_val, all_duty, all_back, all_ref;
  for (const char* t : {"256", "512", "2048", "4096", "8192"}) {
    const std::string run = std::string("h60_") + t;
    const auto held = load(s, run), val = load(s, run, true);
    const auto duty = load_duty(s, run);
    const AnswerMaps priced = answers_for(*both, held);
    const auto at_duty = held_at_duties(*both, held, duty);
    const Gap g_duty = gap(held, at_duty), g_back = gap(held, priced.held),
              g_ref = gap(held, priced.reference);
    std::printf(
        "%-24s %5s tokens: --clock held %4.1f%% / %4.1f%%, at the measured duty %4.1f%% / %4.1f%%, "
        "reference %4.1f%% / %4.1f%% (n=%zu)\n",
        s, t, 100 * g_back.median, 100 * g_back.p90, 100 * g_duty.median, 100 * g_duty.p90,
        100 * g_ref.median, 100 * g_ref.p90, g_duty.n);
    ASSERT_GE(g_duty.n, 100u) << t;
    for (const auto& [k, v] : held) {
      all[k] = v, all_duty[k] = at_duty.at(k), all_back[k] = priced.held.at(k),
      all_ref[k] = priced.reference.at(k);
      if (val.count(k)) all_val[k] = v;
    }
  }
  const Gap g_duty = gap(all, all_duty), g_back = gap(all, all_back), v_duty = gap(all_val, all_duty),
            v_back = gap(all_val, all_back);
  print(s, "five token counts: --clock held", g_back);
  print(s, "five token counts: at the measured duty", g_duty);
  print(s, "five token counts: reference", gap(all, all_ref));
  print(s, "validation half: --clock held", v_back);
  print(s, "validation half: at the measured duty", v_duty);
  const auto& bins = kBins;
  for (std::size_t b = 0; b + 1 < std::size(bins); ++b)
    std::printf("%-24s kernels %6.0f-%7.0f us: signed %+5.1f%% back to back, %+5.1f%% at the duty\n", s,
                1e6 * bins[b], 1e6 * bins[b + 1], 100 * signed_median(all, all_back, bins[b], bins[b + 1]),
                100 * signed_median(all, all_duty, bins[b], bins[b + 1]));
  // 2026-12-06: back to back 4.8% / 9.1% (validation 4.7% / 8.9%), at the measured duty 3.2% / 7.8%
  // (3.0% / 8.0%); with the grid's exponent the duty answer was 3.8% / 8.9% (3.7% / 9.1%): the long
  // GEMMs stay too fast (-5%).
  EXPECT_LT(g_duty.median, g_back.median - 0.005);
  EXPECT_LT(v_duty.median, v_back.median - 0.005);
  EXPECT_LT(g_duty.p90, 0.10);
  EXPECT_LT(v_duty.p90, 0.10);
}

// The duty changed on purpose (an eighth H100 start, GPU-9bee9919, 2026-12-06 18:25 UTC,
// docs/data/calib/h100_hold_spin_probe/): the 1,024-token shapes held 60 ms with the script's spin
// (60,000 cycles), with a spin four times as long (the script with LEAD_IN_CYCLES = 240000), and with
// the script's spin again. The longer spin lowers each shape's duty; the law at the two measured
// duties says how much faster its GEMMs should then run.
TEST(GemmBenchmarkOrder, ALongerSpinLowersTheDutyAndSpeedsTheGemms) {
  const char* s = "h100_hold_spin_probe";
  const auto spin1 = load(s, "h60_spin1"), spin4 = load(s, "h60_spin4"), spin1b = load(s, "h60_spin1b");
  const auto duty1 = load_duty(s, "h60_spin1"), duty4 = load_duty(s, "h60_spin4");
  const auto both = rows_profile("h100_rows_held_both");
  const auto at1 = held_at_duties(*both, spin1, duty1), at4 = held_at_duties(*both, spin4, duty4);
  print(s, "script's spin, twice", gap(spin1, spin1b));
  print(s, "script's spin vs four times as long", gap(spin1, spin4));
  print(s, "script's spin: law at the measured duty", gap(spin1, at1));
  print(s, "four times the spin: law at the measured duty", gap(spin4, at4));
  const auto& bins = kBins;
  std::map<Key, double> measured, predicted;  // log of the time change per shape
  std::vector<double> err;                    // |predicted change - measured change| per shape, in log
  for (const auto& [k, t] : spin1) {
    if (t < bins[0] || t >= bins[std::size(bins) - 1] || !spin4.count(k)) continue;
    measured[k] = std::log(spin4.at(k) / t), predicted[k] = std::log(at4.at(k) / at1.at(k));
    err.push_back(std::fabs(measured[k] - predicted[k]));
  }
  for (std::size_t b = 0; b + 1 < std::size(bins); ++b) {
    const double lo = bins[b], hi = bins[b + 1];
    std::printf(
        "%-24s kernels %6.0f-%7.0f us: duty %.2f -> %.2f, time %+5.1f%% measured, %+5.1f%% by the law\n", s,
        1e6 * lo, 1e6 * hi, bin_median(spin1, duty1, lo, hi), bin_median(spin1, duty4, lo, hi),
        100 * bin_median(spin1, measured, lo, hi), 100 * bin_median(spin1, predicted, lo, hi));
  }
  std::sort(err.begin(), err.end());
  ASSERT_GE(err.size(), 200u);
  const double err_median = err[err.size() / 2], err_p90 = err[std::size_t(0.9 * double(err.size() - 1))];
  std::printf("%-24s the law's change against the measured change, per shape: median %.1f%%  p90 %.1f%%\n", s,
              100 * err_median, 100 * err_p90);
  // 2026-12-06: see docs/accuracy.md ("The duty changed on purpose").
  EXPECT_LT(gap(spin1, spin1b).median, 0.015);
  EXPECT_GT(gap(spin1, spin4).median, 2 * gap(spin1, spin1b).median);
}

}  // namespace
}  // namespace infraplan::hw
