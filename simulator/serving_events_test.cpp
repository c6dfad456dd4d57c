#include "simulator/serving_events.hpp"

#include <gtest/gtest.h>

using namespace infraplan::sim::serve;

TEST(ServingEvents, TotalOrderTimeThenClassThenSequence) {
  EventQueue q;
  q.push(2.0, EventClass::Arrival, -1, 7);
  q.push(1.0, EventClass::TryStart, 0);
  q.push(1.0, EventClass::Arrival, -1, 3);
  q.push(1.0, EventClass::StepDone, 0);
  q.push(1.0, EventClass::Arrival, -1, 4);
  q.push(1.0, EventClass::KvArrived, 1, 9);
  std::vector<std::pair<EventClass, std::int64_t>> got;
  std::vector<double> times;
  while (!q.empty()) {
    auto e = q.pop();
    got.emplace_back(e.cls, e.request);
    times.push_back(e.time_s);
  }
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].first, EventClass::StepDone);
  EXPECT_EQ(got[1].first, EventClass::KvArrived);
  EXPECT_EQ(got[2], std::make_pair(EventClass::Arrival, std::int64_t(3)));  // insertion order breaks the tie
  EXPECT_EQ(got[3], std::make_pair(EventClass::Arrival, std::int64_t(4)));
  EXPECT_EQ(got[4].first, EventClass::TryStart);
  EXPECT_EQ(times[5], 2.0);
}

TEST(ServingEvents, ComparatorIsStrictWeakOrder) {
  EventAfter after;
  Event a{1.0, EventClass::Arrival, 1, -1, -1}, b{1.0, EventClass::Arrival, 2, -1, -1};
  EXPECT_FALSE(after(a, a));
  EXPECT_TRUE(after(b, a));
  EXPECT_FALSE(after(a, b));
}
