#include "strategies/training_schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

using namespace infraplan::strat;

namespace {

// Every (micro-batch, slot) gets one forward and its backward once (B and W once each when split),
// W never before its B, and a backward never before its forward on the same rank.
void check_complete(PpSchedule s, int p, std::int64_t m, int v, int slots_per_mb) {
  for (int stage = 0; stage < p; ++stage) {
    const auto order = pipeline_order(s, p, stage, m, v);
    std::map<std::tuple<std::int64_t, int, int>, int> seen;  // (mb, slot, kind) -> position
    for (int i = 0; i < int(order.size()); ++i) {
      const auto& st = order[std::size_t(i)];
      const int kind = st.forward ? 0 : st.part == BackwardPart::Weight ? 2 : 1;
      auto key = std::make_tuple(st.micro_batch, st.chunk, kind);
      EXPECT_EQ(seen.count(key), 0u) << "stage " << stage << " repeats a pass";
      seen[key] = i;
      if (kind >= 1) {
        auto f = seen.find(std::make_tuple(st.micro_batch, st.chunk, kind - 1));
        EXPECT_TRUE(f != seen.end()) << "stage " << stage << " mb " << st.micro_batch << " kind " << kind;
      }
    }
    std::int64_t forwards = 0;
    for (const auto& [k, pos] : seen) forwards += std::get<2>(k) == 0;
    EXPECT_EQ(forwards, m * slots_per_mb) << pipeline_order(s, p, stage, m, v).size();
  }
}

}  // namespace

TEST(TrainingSchedule, EveryPassOnceInOrder) {
  check_complete(PpSchedule::OneFOneB, 4, 8, 1, 1);
  check_complete(PpSchedule::GPipe, 4, 8, 1, 1);
  check_complete(PpSchedule::Interleaved, 4, 8, 2, 2);
  check_complete(PpSchedule::ZBH1, 4, 8, 1, 1);
  check_complete(PpSchedule::ZBH1, 8, 4, 1, 1);
  // DualPipe: each rank runs half the micro-batches through each of its two stages.
  for (int p : {2, 4, 8})
    for (std::int64_t m : {2 * p, 4 * p, 2 * p + 2}) {
      for (int stage = 0; stage < p; ++stage) {
        const auto order = pipeline_order(PpSchedule::DualPipe, p, stage, m, 1);
        std::int64_t f = 0, w = 0, b = 0;
        std::set<std::pair<std::int64_t, int>> fw;
        for (const auto& st : order) {
          if (st.forward) ++f, fw.insert({st.micro_batch, st.chunk});
          else if (st.part == BackwardPart::Weight) ++w;
          else ++b;
          EXPECT_EQ(st.chunk, st.micro_batch < m / 2 ? 0 : 1);
        }
        EXPECT_EQ(f, m);
        EXPECT_EQ(b, m);
        EXPECT_EQ(fw.size(), std::size_t(m));
        EXPECT_LE(w, m);
      }
    }
}

TEST(TrainingSchedule, ZbH1DefersWeightGradientsByStage) {
  // The last stage (s = p - 1) lets p - 1 W passes wait; the first none.
  const auto first = pipeline_order(PpSchedule::ZBH1, 4, 0, 8, 1);
  const auto last = pipeline_order(PpSchedule::ZBH1, 4, 3, 8, 1);
  auto pending_max = [](const std::vector<PipelineStep>& o) {
    int pending = 0, most = 0;
    for (const auto& st : o) {
      if (!st.forward && st.part == BackwardPart::Input) ++pending;
      if (!st.forward && st.part == BackwardPart::Weight) --pending;
      most = std::max(most, pending);
    }
    return most;
  };
  EXPECT_EQ(pending_max(first), 1);
  EXPECT_EQ(pending_max(last), 4);
}

TEST(TrainingSchedule, PublishedBubbleFormulas) {
  const PassTimes t{1.0, 1.2, 0.8};
  EXPECT_DOUBLE_EQ(schedule_bubble_seconds(PpSchedule::OneFOneB, 8, 1, t), 7 * 3.0);
  EXPECT_DOUBLE_EQ(schedule_bubble_seconds(PpSchedule::Interleaved, 8, 4, t), 7 * 3.0 / 4);
  EXPECT_DOUBLE_EQ(schedule_bubble_seconds(PpSchedule::ZBH1, 8, 1, t), 7 * (1.0 + 1.2 - 0.8));
  // DeepSeek-V3 Table 2: (PP/2 − 1)(F&B + B − 3W), F&B = F + B + W, B = B + W here.
  EXPECT_DOUBLE_EQ(schedule_bubble_seconds(PpSchedule::DualPipe, 8, 1, t), 3 * ((1.0 + 2.0) + 2.0 - 2.4));
}

TEST(TrainingSchedule, InflightActivationsAsPublished) {
  EXPECT_DOUBLE_EQ(schedule_inflight_microbatches(PpSchedule::OneFOneB, 8, 0, 32, 1), 8);
  EXPECT_DOUBLE_EQ(schedule_inflight_microbatches(PpSchedule::OneFOneB, 8, 7, 32, 1), 1);
  EXPECT_DOUBLE_EQ(schedule_inflight_microbatches(PpSchedule::ZBH1, 8, 7, 32, 1), 8);
  EXPECT_DOUBLE_EQ(schedule_inflight_microbatches(PpSchedule::DualPipe, 8, 3, 32, 1), 4.5);
  EXPECT_DOUBLE_EQ(schedule_inflight_microbatches(PpSchedule::GPipe, 8, 3, 32, 1), 32);
}
