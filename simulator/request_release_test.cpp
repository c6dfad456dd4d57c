#include "simulator/request_release.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.hpp"
#include "simulator/workload.hpp"

using namespace infraplan;
using namespace infraplan::sim::serve;

namespace {
WorkloadSpec closed(int requests, int concurrency, double think_s = 0, int turns = 1) {
  Json j = {{"requests", requests},
            {"arrival", {{"type", "closed"}, {"concurrency", concurrency}, {"think_time_s", think_s}}},
            {"prompt_tokens", 64},
            {"output_tokens", 8}};
  if (turns > 1) j["sessions"] = {{"turns", turns}};
  return workload_from_json(j, 1);
}
std::string error_of(const Json& j) {
  try {
    workload_from_json(j, 1);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(RequestRelease, ClosedLoopSendsConcurrencyFirstThenOneOnEachFinish) {
  const auto w = closed(10, 3, 0.25);
  const auto reqs = make_requests(w);
  ASSERT_EQ(reqs.size(), 10u);
  RequestRelease rel(reqs, w);
  const auto first = rel.initial();
  ASSERT_EQ(first.size(), 3u);
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].id, std::int64_t(i));
    EXPECT_EQ(first[i].time_s, 0.0);
  }
  EXPECT_EQ(rel.queued(), 7);
  auto next = rel.on_finish(1, 2.0);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].id, 3);
  EXPECT_DOUBLE_EQ(next[0].time_s, 2.25) << "the client thinks 0.25 s before its next request";
  EXPECT_EQ(rel.queued(), 6);
  for (int id = 0; id < 10; ++id) rel.on_finish(id, 3.0);
  EXPECT_EQ(rel.queued(), 0);
  EXPECT_TRUE(rel.on_finish(9, 4.0).empty()) << "nothing left to send";
}

TEST(RequestRelease, ClosedLoopConversationsHoldTheirSlotUntilTheLastTurn) {
  const auto w = closed(6, 1, 0, 3);  // two conversations of three turns, one at a time
  const auto reqs = make_requests(w);
  RequestRelease rel(reqs, w);
  const auto first = rel.initial();
  ASSERT_EQ(first.size(), 1u);
  // Turn 2 follows turn 1; the second conversation waits for the first one's last turn.
  std::int64_t id = first[0].id;
  for (int turn = 0; turn < 2; ++turn) {
    const auto next = rel.on_finish(id, 1.0 + turn);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(reqs[std::size_t(next[0].id)].after_request, id);
    id = next[0].id;
  }
  const auto second = rel.on_finish(id, 5.0);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_LT(reqs[std::size_t(second[0].id)].after_request, 0) << "a new conversation";
  EXPECT_EQ(second[0].time_s, 5.0);
}

TEST(RequestRelease, OpenLoopRequestsGoAtTheirArrivalTimes) {
  Json j = {{"requests", 5}, {"arrival", {{"type", "fixed"}, {"rate_per_s", 2}}}};
  const auto w = workload_from_json(j, 1);
  const auto reqs = make_requests(w);
  RequestRelease rel(reqs, w);
  const auto first = rel.initial();
  ASSERT_EQ(first.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(first[i].time_s, 0.5 * double(i));
  EXPECT_TRUE(rel.on_finish(0, 1.0).empty());
}

TEST(RequestRelease, ClosedLoopKeysAreCheckedWithClearErrors) {
  EXPECT_NE(error_of({{"arrival", {{"type", "closed"}}}}).find("workload.arrival.concurrency is required"),
            std::string::npos);
  EXPECT_NE(error_of({{"arrival", {{"type", "closed"}, {"concurrency", 4}, {"rate_per_s", 3}}}})
                .find("workload.arrival.rate_per_s does not apply to a closed loop"),
            std::string::npos);
  EXPECT_NE(error_of({{"arrival", {{"type", "poisson"}, {"concurrency", 4}}}})
                .find("applies only to arrival type 'closed'"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"arrival", {{"type", "closed"}, {"concurrency", 0}}}}).find("workload.arrival.concurrency"),
      std::string::npos);
  EXPECT_NE(error_of({{"arrival", {{"type", "closd"}}}}).find("closed"), std::string::npos);
  const auto w = closed(4, 2, 0.5);
  EXPECT_EQ(w.to_json()["classes"][0]["arrival"]["type"], "closed");
  EXPECT_EQ(w.to_json()["classes"][0]["arrival"]["concurrency"], 2);
}
