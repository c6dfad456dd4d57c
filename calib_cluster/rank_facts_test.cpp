#include "calib_cluster/rank_facts.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace infraplan::ccal {
namespace {

std::vector<RankFacts> two_nodes_of_two() {
  std::vector<RankFacts> f;
  // Ranks interleaved across hosts (round-robin mapping): nodes are ordered by lowest rank.
  const char* hosts[] = {"n0", "n1", "n0", "n1"};
  for (int r = 0; r < 4; ++r) {
    RankFacts x;
    x.rank = r;
    x.host = hosts[r];
    x.local_rank = r / 2;
    x.device = r / 2;
    x.device_name = "NVIDIA H200";
    x.device_bus_id = "0000:0" + std::to_string(r / 2) + ":00.0";
    f.push_back(x);
  }
  return f;
}

std::string error_of(const std::vector<RankFacts>& f, int emulate = 0) {
  try {
    check_layout(f, emulate);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RankFacts, LayoutOrdersNodesAndLocalRanks) {
  const ClusterLayout L = check_layout(two_nodes_of_two());
  ASSERT_EQ(L.nodes(), 2);
  EXPECT_EQ(L.ranks_per_node, 2);
  EXPECT_EQ(L.hosts, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(L.node_ranks[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(L.node_ranks[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(L.node_of(3), 1);
  EXPECT_EQ(L.local_of(3), 1);
  EXPECT_EQ(L.device_name, "NVIDIA H200");
}

TEST(RankFacts, JsonRoundTrip) {
  const RankFacts a = two_nodes_of_two()[3];
  const RankFacts b = RankFacts::from_json(a.to_json());
  EXPECT_EQ(b.to_json(), a.to_json());
}

TEST(RankFacts, MismatchedGpuModelsNameTheRanks) {
  auto f = two_nodes_of_two();
  f[3].device_name = "NVIDIA H100 80GB HBM3";
  const std::string m = error_of(f);
  EXPECT_NE(m.find("GPU models differ"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 3 (n1): NVIDIA H100 80GB HBM3"), std::string::npos) << m;
  EXPECT_NE(m.find("ranks 0-2 (n0, n1): NVIDIA H200"), std::string::npos) << m;
  EXPECT_NE(m.find("No profile written"), std::string::npos) << m;
}

TEST(RankFacts, DuplicateLocalRankOrGpuNameBothRanks) {
  auto f = two_nodes_of_two();
  f[2].local_rank = 0;
  EXPECT_NE(error_of(f).find("ranks 0 and 2 on host n0 both have local rank 0"), std::string::npos)
      << error_of(f);
  f = two_nodes_of_two();
  f[3].device_bus_id = f[1].device_bus_id;
  EXPECT_NE(error_of(f).find("ranks 1 and 3 on host n1 drive the same GPU"), std::string::npos)
      << error_of(f);
}

TEST(RankFacts, UnevenNodesAreRefused) {
  auto f = two_nodes_of_two();
  f[2].host = "n1";
  f[2].local_rank = 2;
  f[2].device_bus_id = "0000:02:00.0";
  const std::string m = error_of(f);
  EXPECT_NE(m.find("hosts run different numbers of ranks"), std::string::npos) << m;
  EXPECT_NE(m.find("n0 runs 1"), std::string::npos) << m;
}

TEST(RankFacts, EmulatedNodesAreBlocksOfRanks) {
  std::vector<RankFacts> f;
  for (int r = 0; r < 6; ++r) f.push_back({r, "h", r, -1, "host CPU: x", "", 0, "host-mpi", ""});
  const ClusterLayout L = check_layout(f, 3);
  ASSERT_EQ(L.nodes(), 2);
  EXPECT_TRUE(L.emulated_nodes);
  EXPECT_EQ(L.node_ranks[1], (std::vector<int>{3, 4, 5}));
  EXPECT_NE(error_of(f, 4).find("do not divide"), std::string::npos);
}

TEST(RankFacts, RankRanges) {
  EXPECT_EQ(rank_ranges({5, 0, 1, 2, 7, 8}), "0-2, 5, 7-8");
  EXPECT_EQ(rank_ranges({3}), "3");
}

}  // namespace
}  // namespace infraplan::ccal
