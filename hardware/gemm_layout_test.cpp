// GEMM layouts in the cost model: layout ratio tables, rows along each layout's token axis, exact
// shapes keyed by layout, the fleet scale and the measured spread (docs/calibration.md, "GEMM
// layouts", "Fleet median and spread").
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hardware/calibrated_cost_model.hpp"
#include "hardware/recording_cost_model.hpp"
#include "hardware/spread_cost_model.hpp"
#include "common/error.hpp"
#include "common/json_util.hpp"

namespace infraplan::hw {
namespace {

GemmShape gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout l = GemmLayout::TN,
               Dtype d = Dtype::BF16) {
  GemmShape s;
  s.m = m, s.n = n, s.k = k, s.dtype = d, s.layout = l;
  return s;
}

/// The embedded H200 profile without the sections under test (layouts, rows, fleet, spread).
Json bare_h200() {
  Json j = parse_json_text(default_profile_json("h200-sxm-141gb"), "h200");
  for (auto it = j["tables"]["gemm"].begin(); it != j["tables"]["gemm"].end(); ++it) it.value().erase("layouts");
  j["tables"].erase("gemm_rows");
  j["tables"].erase("gemm_shapes");
  j.erase("fleet");
  j.erase("spread");
  return j;
}

CalibratedCostModel model(const Json& j) { return CalibratedCostModel(parse_profile(j, "synthetic"), find_gpu("h200-sxm-141gb")); }

/// A bf16 layout table with constant ratios over a 2×2×2 sub-grid.
Json layout_table(double nn, double nt) {
  auto grid = [](double v) { return Json::array({{{v, v}, {v, v}}, {{v, v}, {v, v}}}); };
  return {{"m", {256, 4096}}, {"n", {1024, 8192}}, {"k", {1024, 8192}}, {"nn", {{"ratio", grid(nn)}}},
          {"nt", {{"ratio", grid(nt)}}}, {"runs", 2}};
}

TEST(GemmLayout, NamesRoundTrip) {
  for (GemmLayout l : {GemmLayout::TN, GemmLayout::NN, GemmLayout::NT})
    EXPECT_EQ(parse_gemm_layout(gemm_layout_name(l)), l);
  EXPECT_EQ(parse_gemm_layout("NT"), GemmLayout::NT);
  EXPECT_FALSE(parse_gemm_layout("tt").has_value());
}

// Without a layout table every layout costs what the TN table says; with one, NN and NT take its
// ratio (interpolated, clamped outside), fp8 stays TN (Hopper runs fp8 in TN only).
TEST(GemmLayout, RatioTableScalesBackwardLayouts) {
  Json j = bare_h200();
  const CalibratedCostModel plain = model(j);
  const GemmShape tn = gemm(2048, 4096, 4096);
  for (GemmLayout l : {GemmLayout::NN, GemmLayout::NT}) {
    GemmShape s = tn;
    s.layout = l;
    EXPECT_DOUBLE_EQ(plain.gemm(s).seconds, plain.gemm(tn).seconds);
  }
  j["tables"]["gemm"]["bf16"]["layouts"] = layout_table(1.25, 0.8);
  const CalibratedCostModel cm = model(j);
  GemmShape nn = tn, nt = tn;
  nn.layout = GemmLayout::NN, nt.layout = GemmLayout::NT;
  EXPECT_NEAR(cm.gemm(nn).seconds, 1.25 * cm.gemm(tn).seconds, 1e-15);
  EXPECT_NEAR(cm.gemm(nt).seconds, 0.8 * cm.gemm(tn).seconds, 1e-15);
  EXPECT_NE(cm.gemm(nn).detail.find("layout nn: ×1.25"), std::string::npos) << cm.gemm(nn).detail;
  GemmShape far = gemm(32768, 32768, 256, GemmLayout::NN);  // outside the sub-grid: clamped
  EXPECT_NEAR(cm.layout_ratio(far), 1.25, 1e-12);
  GemmShape f8 = gemm(2048, 4096, 4096, GemmLayout::NT, Dtype::FP8);
  GemmShape f8tn = f8;
  f8tn.layout = GemmLayout::TN;
  EXPECT_DOUBLE_EQ(cm.gemm(f8).seconds, cm.gemm(f8tn).seconds);
  // fp16 has no table of its own: bf16's.
  EXPECT_NEAR(cm.layout_ratio(gemm(2048, 4096, 4096, GemmLayout::NN, Dtype::FP16)), 1.25, 1e-12);
  // Malformed tables name the field.
  Json bad = j;
  bad["tables"]["gemm"]["bf16"]["layouts"]["nt"]["ratio"][0][0] = Json::array({1.0});
  try {
    parse_profile(bad, "x.json");
    ADD_FAILURE() << "accepted a short ratio table";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tables.gemm.bf16.layouts.nt.ratio"), std::string::npos) << e.what();
  }
}

// Rows run along their layout's token axis: m for TN and NN, k for NT (the weight gradient reduces
// over the tokens); exact shapes are keyed by layout too.
TEST(GemmLayout, RowsAndExactShapesFollowTheirLayout) {
  Json j = bare_h200();
  Json pts_m = Json::array(), pts_k = Json::array();
  for (double t : {512.0, 1024.0, 2048.0}) {
    pts_m.push_back({{"m", t}, {"seconds", t * 1e-7}});
    pts_k.push_back({{"k", t}, {"seconds", t * 2e-7}});
  }
  j["tables"]["gemm_rows"] = Json::array({{{"dtype", "bf16"}, {"layout", "nn"}, {"n", 4096}, {"k", 14336}, {"points", pts_m}},
                                          {{"dtype", "bf16"}, {"layout", "nt"}, {"m", 14336}, {"n", 4096}, {"points", pts_k}}});
  j["tables"]["gemm_shapes"] = Json::array(
      {{{"dtype", "bf16"}, {"layout", "nt"}, {"m", 14336}, {"n", 4096}, {"k", 700}, {"seconds", 3e-3}}});
  const CalibratedCostModel cm = model(j), plain = model(bare_h200());
  EXPECT_NEAR(cm.gemm(gemm(1024, 4096, 14336, GemmLayout::NN)).seconds, 1024e-7, 1e-15);
  EXPECT_NEAR(cm.gemm(gemm(14336, 4096, 1024, GemmLayout::NT)).seconds, 2048e-7, 1e-15);
  const double mid = cm.gemm(gemm(14336, 4096, 1500, GemmLayout::NT)).seconds;
  EXPECT_GT(mid, 2048e-7);
  EXPECT_LT(mid, 4096e-7);
  EXPECT_NE(cm.gemm(gemm(14336, 4096, 1500, GemmLayout::NT)).detail.find("measured over k"), std::string::npos);
  EXPECT_NEAR(cm.gemm(gemm(14336, 4096, 700, GemmLayout::NT)).seconds, 3e-3, 1e-15);
  // The same sizes in another layout are not these measurements.
  EXPECT_DOUBLE_EQ(cm.gemm(gemm(1024, 4096, 14336)).seconds, plain.gemm(gemm(1024, 4096, 14336)).seconds);
  EXPECT_DOUBLE_EQ(cm.gemm(gemm(14336, 4096, 700)).seconds, plain.gemm(gemm(14336, 4096, 700)).seconds);
  // Outside a row's token range: the tables.
  EXPECT_DOUBLE_EQ(cm.gemm(gemm(8192, 4096, 14336, GemmLayout::NN)).seconds,
                   plain.gemm(gemm(8192, 4096, 14336, GemmLayout::NN)).seconds);
  // An NT row needs its m and n; a bad layout is named.
  for (auto [mutate, field] : std::vector<std::pair<std::function<void(Json&)>, std::string>>{
           {[](Json& r) { r[1].erase("m"); }, "tables.gemm_rows[1].m"},
           {[](Json& r) { r[1]["points"][2]["k"] = 100; }, "tables.gemm_rows[1].points[2].k"},
           {[](Json& r) { r[0]["layout"] = "tt"; }, "tables.gemm_rows[0].layout"}}) {
    Json bad = j;
    mutate(bad["tables"]["gemm_rows"]);
    try {
      parse_profile(bad, "x.json");
      ADD_FAILURE() << "accepted a bad row (" << field << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// The fleet scale multiplies what the tables predict, not measurements of the shape itself.
TEST(GemmLayout, FleetScaleMultipliesTablePredictions) {
  Json j = bare_h200();
  const CalibratedCostModel plain = model(j);
  j["fleet"] = {{"gemm", {{"scale", {{"bf16", 1.1}}}}}};
  j["tables"]["gemm_shapes"] =
      Json::array({{{"dtype", "bf16"}, {"m", 777}, {"n", 4096}, {"k", 4096}, {"seconds", 1e-4}}});
  const CalibratedCostModel cm = model(j);
  for (GemmShape s : {gemm(2048, 4096, 4096), gemm(3000, 5000, 7000, GemmLayout::NT), gemm(1, 4096, 4096)})
    EXPECT_NEAR(cm.gemm(s).seconds, 1.1 * plain.gemm(s).seconds, 1e-12 * plain.gemm(s).seconds);
  EXPECT_DOUBLE_EQ(cm.gemm(gemm(777, 4096, 4096)).seconds, 1e-4);
  EXPECT_DOUBLE_EQ(cm.gemm(gemm(2048, 4096, 4096, GemmLayout::TN, Dtype::FP8)).seconds,
                   plain.gemm(gemm(2048, 4096, 4096, GemmLayout::TN, Dtype::FP8)).seconds);
  // Fitting (quanta, off-grid factor, clock exponent) does not see the scale.
  EXPECT_DOUBLE_EQ(cm.offgrid_factor(Dtype::BF16), plain.offgrid_factor(Dtype::BF16));
  j["fleet"]["gemm"]["scale"]["bf16"] = 3.0;
  EXPECT_THROW(parse_profile(j, "x.json"), Error);
}

// The spread section: parsed with its fields named on error; a SpreadCostModel scales each op
// kind to its band's edge and leaves the others.
TEST(GemmLayout, SpreadBandsScaleOpsByKind) {
  Json j = bare_h200();
  j["spread"] = {{"gemm", {{"low", -0.05}, {"high", 0.08}, {"samples", 10}}},
                 {"attention", {{"low", -0.02}, {"high", 0.03}}},
                 {"method", "test"}};
  const Profile p = parse_profile(j, "x.json");
  const SpreadBands b = spread_bands(p);
  ASSERT_TRUE(b.known());
  EXPECT_FALSE(b.memory.has_value());
  const CalibratedCostModel cm(p, find_gpu("h200-sxm-141gb"));
  SpreadCostModel lo(cm, b, SpreadCostModel::Edge::Low), hi(cm, b, SpreadCostModel::Edge::High);
  const GemmShape g = gemm(2048, 4096, 4096);
  EXPECT_NEAR(lo.gemm(g).seconds, 0.95 * cm.gemm(g).seconds, 1e-15);
  EXPECT_NEAR(hi.gemm(g).seconds, 1.08 * cm.gemm(g).seconds, 1e-15);
  AttentionPrefillShape a;
  a.batch = 2, a.q_len = a.kv_len = 2048, a.heads = 32, a.kv_heads = 8, a.head_dim = 128;
  EXPECT_NEAR(hi.attention_prefill(a).seconds, 1.03 * cm.attention_prefill(a).seconds, 1e-15);
  EXPECT_DOUBLE_EQ(hi.memory_bound(1e9).seconds, cm.memory_bound(1e9).seconds);
  EXPECT_DOUBLE_EQ(hi.launch_overhead_seconds(), cm.launch_overhead_seconds());
  auto r = b.range("gemm", 1.0);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->first, 0.95);
  EXPECT_DOUBLE_EQ(r->second, 1.08);
  for (auto [key, value, field] : std::vector<std::tuple<const char*, double, std::string>>{
           {"low", 0.1, "spread.gemm.low"}, {"high", -0.1, "spread.gemm.high"}}) {
    Json bad = j;
    bad["spread"]["gemm"][key] = value;
    try {
      parse_profile(bad, "x.json");
      ADD_FAILURE() << "accepted " << field << " = " << value;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// --gemm-shapes-out records the layout with each shape.
TEST(GemmLayout, RecordingKeepsLayouts) {
  const CalibratedCostModel cm = model(bare_h200());
  RecordingCostModel rec(cm);
  rec.gemm(gemm(1024, 4096, 4096));
  rec.gemm(gemm(1024, 4096, 4096, GemmLayout::NN));
  rec.gemm(gemm(1024, 4096, 4096, GemmLayout::NN));
  const Json j = rec.shapes_json();
  ASSERT_EQ(j["gemm_shapes"].size(), 2u);
  int nn = 0;
  for (const auto& e : j["gemm_shapes"])
    if (e["layout"] == "nn") nn = int(e["calls"].get<double>());
  EXPECT_EQ(nn, 2);
}

}  // namespace
}  // namespace infraplan::hw
