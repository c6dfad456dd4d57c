// The paged attention model (hardware/paged_attention_model.hpp): the CTA schedule, the fit on
// single-chunk launches checked against held-out multi-chunk launches, and decode prefix sharing,
// on the embedded H200 profile's "serving_attention" measurements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "common/json_util.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/paged_attention_model.hpp"

namespace infraplan::hw {
namespace {

TEST(PagedAttention, MakespanDealsLongestFirst) {
  // Fewer CTAs than slots: the longest one.
  EXPECT_DOUBLE_EQ(cta_makespan({3, 7, 5}, 1, 4), 8);
  // Six CTAs of 4 tiles on 3 slots: two rounds.
  EXPECT_DOUBLE_EQ(cta_makespan(std::vector<double>(6, 4), 0, 3), 8);
  // Longest first: {9} | {5, 3, 2} | {4, 4} = 10.
  EXPECT_DOUBLE_EQ(cta_makespan({2, 3, 4, 4, 5, 9}, 0, 3), 10);
  EXPECT_DOUBLE_EQ(cta_makespan({}, 1, 3), 0);
}

const CalibratedCostModel& h200() {
  static const auto cm = make_calibrated_cost_model("h200-sxm-141gb", "");
  return *cm;
}

TEST(PagedAttention, FitOnSingleChunksPredictsMultiChunkLaunches) {
  const PagedAttentionModel* m = h200().paged_attention();
  ASSERT_NE(m, nullptr) << "the embedded H200 profile has no serving_attention section";
  const auto& p = m->params();
  std::printf("t0 %.2f us, t_tile %.3f us, per-CTA %.2f tiles, shared-SM slow-down %.2f, %d slots, rho %.3f\n",
              p.t0 * 1e6, p.t_tile * 1e6, p.c_cta, p.shared_slowdown, p.slots, p.rho);
  for (const auto& c : m->checks())
    std::printf("  %-8s %-44s measured %9.3g modelled %9.3g (%+.1f%%)\n", c.role.c_str(), c.label.c_str(),
                c.measured, c.modelled, 100 * (c.modelled / c.measured - 1));
  std::printf("max error: prefill fit %.1f%%, holdout %.1f%%; decode fit %.1f%%, holdout %.1f%%\n",
              100 * m->max_error("prefill", "fit"), 100 * m->max_error("prefill", "holdout"),
              100 * m->max_error("decode", "fit"), 100 * m->max_error("decode", "holdout"));
  EXPECT_GT(p.t_tile, 0);
  EXPECT_GE(p.t0, 0);
  EXPECT_LT(m->max_error("prefill", "fit"), 0.20);
  EXPECT_LT(m->max_error("prefill", "holdout"), 0.20);
  EXPECT_LT(m->max_error("decode", "holdout"), 0.15);
  EXPECT_GT(p.rho, 0.3);
  EXPECT_LT(p.rho, 1.0);
}

TEST(PagedAttention, ShortChunkAfterLongPrefixCostsItsKeyTiles) {
  // 16 new tokens after 4096 cached: 32 CTAs walking 65 tiles each, far above the FLOPs' worth and
  // about 3.5x the same chunk after 1024 cached tokens.
  AttentionPrefillLaunch l{{{16, 4096}}, 32, 8, 128, Dtype::BF16};
  const double long_prefix = h200().attention_prefill_launch(l)->seconds;
  l.chunks = {{16, 1024}};
  const double short_prefix = h200().attention_prefill_launch(l)->seconds;
  EXPECT_GT(long_prefix / short_prefix, 2.5);
  EXPECT_LT(long_prefix / short_prefix, 4.5);
  // Eighteen chunks in one launch cost far less than eighteen launches.
  l.chunks.assign(18, {150, 1024});
  const double together = h200().attention_prefill_launch(l)->seconds;
  l.chunks = {{150, 1024}};
  EXPECT_LT(together, 0.6 * 18 * h200().attention_prefill_launch(l)->seconds);
  // Other head widths and formats fall back on the per-chunk tables.
  l.head_dim = 64;
  EXPECT_FALSE(h200().attention_prefill_launch(l).has_value());
}

TEST(PagedAttention, SharedPrefixDecodeIsCheaper) {
  AttentionDecodeShape d{32, 32 * 1100, 32, 8, 128, Dtype::BF16};
  const double own = h200().attention_decode(d).seconds;
  d.unique_context_tokens = 1024 + 32 * 76;
  const double shared = h200().attention_decode(d).seconds;
  EXPECT_LT(shared, 0.9 * own);
  EXPECT_GT(shared, 0.5 * own);
}

TEST(PagedAttention, ProfileSectionErrorsNameTheField) {
  Json j = read_json_file(std::string(INFRAPLAN_SOURCE_DIR) + "/hardware/profiles/h200-sxm-141gb.json");
  Json bad = j;
  bad["serving_attention"]["prefill"][0]["chunks"][0][0] = 0;
  try {
    parse_profile(bad, "bad.json");
    FAIL() << "accepted a chunk of 0 new tokens";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("serving_attention.prefill[0].chunks[0][0]"), std::string::npos) << e.what();
  }
  bad = j;
  bad["serving_attention"]["decode"][0]["unique_blocks"] = 1e9;
  EXPECT_THROW(parse_profile(bad, "bad.json"), Error);
  bad = j;
  bad["serving_attention"]["prefill"] = Json::array({bad["serving_attention"]["prefill"][0]});
  EXPECT_THROW(CalibratedCostModel(parse_profile(bad, "bad.json"), find_gpu("h200-sxm-141gb")), Error);
}

}  // namespace
}  // namespace infraplan::hw

namespace infraplan::hw {
namespace {

TEST(PagedAttention, HugeLaunchesAreBoundedNotListed) {
  // 4096 chunks of 2^24 tokens over 65536 heads: the closed-form bound, finite, at once.
  AttentionPrefillLaunch l{std::vector<std::array<std::int64_t, 2>>(4096, {std::int64_t(1) << 24, std::int64_t(1) << 24}),
                           65536, 8, 128, Dtype::BF16};
  const auto e = make_calibrated_cost_model("h200-sxm-141gb", "")->attention_prefill_launch(l);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(std::isfinite(e->seconds));
  EXPECT_GT(e->seconds, 1e3);
  // Just above the exact deal's limit the bound stays near the dealt makespan.
  AttentionPrefillLaunch a{{{65536, 0}}, 128, 8, 128, Dtype::BF16}, b{{{65536 + 128, 0}}, 128, 8, 128, Dtype::BF16};
  const auto cm = make_calibrated_cost_model("h200-sxm-141gb", "");
  EXPECT_NEAR(cm->attention_prefill_launch(b)->seconds / cm->attention_prefill_launch(a)->seconds, 1.0, 0.05);
}

}  // namespace
}  // namespace infraplan::hw
