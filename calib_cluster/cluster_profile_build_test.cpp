#include "calib_cluster/cluster_profile_build.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "collectives/comm_profile.hpp"
#include "common/error.hpp"

namespace infraplan::ccal {
namespace {

using coll::CollectiveOp;

const std::string kSrc = INFRAPLAN_SOURCE_DIR;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SweepResults, GroupMeanThenMedianOverGroups) {
  SweepPhase p;
  p.name = "intra-2";
  p.scope = "intra";
  p.group_size = 2;
  p.groups = {{0, 1}, {2, 3}, {4, 5}};
  p.ops = {CollectiveOp::AllReduce};
  std::vector<PointRecord> r = {
      {0, 0, 0, CollectiveOp::AllReduce, 1024, 10e-6}, {0, 0, 1, CollectiveOp::AllReduce, 1024, 14e-6},
      {0, 1, 2, CollectiveOp::AllReduce, 1024, 20e-6}, {0, 1, 3, CollectiveOp::AllReduce, 1024, 20e-6},
      {0, 2, 4, CollectiveOp::AllReduce, 1024, 30e-6}, {0, 2, 5, CollectiveOp::AllReduce, 1024, 40e-6}};
  const auto rows = aggregate_records(records_from_json(records_to_json(r)), {p});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].seconds, 20e-6);  // group means 12, 20, 35 us
  EXPECT_DOUBLE_EQ(rows[0].seconds_min, 12e-6);
  EXPECT_DOUBLE_EQ(rows[0].seconds_max, 35e-6);
  EXPECT_EQ(rows[0].groups, 3);
  const Json j = rows_json(rows, {p});
  EXPECT_NEAR(j[0]["busbw_GBps"].get<double>(), 1024 / 20e-6 / 1e9, 1e-12);  // all_reduce n = 2: factor 1
  r.pop_back();                                                              // rank 5 did not report
  EXPECT_NE(error_of([&] { aggregate_records(r, {p}); }).find("1 of 2 ranks reported"), std::string::npos);
}

/// The 2-H200 sweep (docs/data/h200x2_nccl.json) as a run of one node of two ranks.
CommRun two_h200_run() {
  CommRun run;
  run.layout.hosts = {"h0"};
  run.layout.node_ranks = {{0, 1}};
  run.layout.ranks_per_node = 2;
  run.layout.device_name = "NVIDIA H200";
  NodeFacts n;
  n.host = "h0";
  n.gpu_topology =
      "        GPU0    GPU1    CPU Affinity\nGPU0     X      NV18    0-15\nGPU1    NV18     X      0-15\n";
  run.nodes = {n};
  SweepOptions o;
  o.ops = {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
           CollectiveOp::AllToAll,  CollectiveOp::Broadcast, CollectiveOp::SendRecv};
  run.phases = plan_sweeps(run.layout, o);
  run.transport = "nccl";
  const Json d = read_json_file(kSrc + "/docs/data/h200x2_nccl.json");
  for (const auto& r : d.at("comm").at("rows")) {
    SweepRow row;
    row.op = coll::parse_op(r.at("op").get<std::string>());
    row.bytes = r.at("bytes").get<std::size_t>();
    row.seconds = row.seconds_min = row.seconds_max = r.at("time_us").get<double>() * 1e-6;
    row.groups = 1;
    run.rows.push_back(row);
  }
  return run;
}

TEST(ClusterProfile, BuiltFromAGpuRunWithRefitAndReport) {
  const Json p = build_cluster_profile(two_h200_run());
  EXPECT_EQ(p.at("schema"), "infraplan-cluster-profile/1");
  EXPECT_EQ(p.at("cluster").at("gpu"), "h200-sxm-141gb");
  EXPECT_EQ(p.at("cluster").at("gpus_per_node"), 2);
  EXPECT_EQ(p.at("comm").at("phases").at(0).at("cluster_ranks"), Json::array({0, 1}));
  const coll::CommProfile cp = coll::CommProfile::from_json(p, "p");
  EXPECT_EQ(cp.link_efficiency.size(), 6u * 3u);  // every op x protocol, intra
  EXPECT_EQ(cp.latency_fits.size(), 6u);
  // The refit describes its own calls within the targets (in-sample), whatever the defaults did.
  for (const auto& s : p.at("comm").at("report").at("summary")) {
    const double bound = s.at("sizes") == ">= 64 MiB" ? 0.10 : s.at("sizes") == "< 1 MiB" ? 0.20 : 1.0;
    EXPECT_LE(s.at("refit_median_abs_error").get<double>(), bound) << s.dump();
  }
}

TEST(LibraryMemory, PerPhaseSummaryAndTheLargestOfGroupsOfTwoOrMore) {
  SweepPhase one, two;
  one.name = "intra-1";
  one.group_size = 1;
  two.name = "intra-2";
  two.group_size = 2;
  const std::vector<SweepPhase> phases = {one, two};
  const std::vector<LibraryMemoryRecord> r = {{0, 0, 9e8}, {1, 0, 2e8}, {1, 1, 3e8}};
  const auto back = memory_records_from_json(memory_records_to_json(r));
  ASSERT_EQ(back.size(), 3u);
  const Json j = library_memory_json(back, phases);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1].at("phase"), "intra-2");
  EXPECT_EQ(j[1].at("ranks_measured"), 2);
  EXPECT_DOUBLE_EQ(j[1].at("bytes_median").get<double>(), 2.5e8);
  EXPECT_DOUBLE_EQ(j[1].at("bytes_max").get<double>(), 3e8);
  // A rank alone opens no connection: the one-rank phase does not count.
  EXPECT_DOUBLE_EQ(nccl_buffer_bytes(back, phases), 3e8);
  EXPECT_DOUBLE_EQ(nccl_buffer_bytes({{0, 0, 9e8}}, phases), 0);
  EXPECT_NE(error_of([&] { nccl_buffer_bytes({{5, 3, 1}}, phases); }).find("rank 3 reported library memory for phase 5"),
            std::string::npos);
  EXPECT_NE(error_of([&] { memory_records_from_json(Json::array({Json::array({0, "x", 1})})); }).find("malformed"),
            std::string::npos);
}

TEST(ClusterProfile, MeasuredNcclMemoryReachesTheCluster) {
  CommRun run = two_h200_run();
  Json p = build_cluster_profile(run);
  EXPECT_FALSE(p.at("cluster").contains("nccl_buffer_bytes"));
  EXPECT_FALSE(p.at("comm").contains("library_memory"));
  run.library_memory = {{0, 0, 4.0e8}, {0, 1, 4.5e8}};
  p = build_cluster_profile(run);
  EXPECT_DOUBLE_EQ(p.at("cluster").at("nccl_buffer_bytes").get<double>(), 4.5e8);
  EXPECT_EQ(p.at("comm").at("library_memory").at(0).at("phase"), "intra-2");
  EXPECT_NE(p.at("topology").at("derivation").at("nccl_buffer_bytes").get<std::string>().find("measured:"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(hw::resolve_cluster(p.at("cluster")).nccl_buffer_bytes, 4.5e8);
}

TEST(ClusterProfile, HostRunHasNoClusterAndDoesNotMergeWithGpus) {
  CommRun run = two_h200_run();
  run.transport = "host-mpi";
  run.layout.device_name = "host CPU: x";
  const Json p = build_cluster_profile(run);
  EXPECT_FALSE(p.contains("cluster"));
  EXPECT_FALSE(p.at("comm").contains("model"));
  const Json gpu = read_json_file(kSrc + "/hardware/profiles/h200-sxm-141gb.json");
  EXPECT_NE(error_of([&] {
              merge_cluster_profiles({{"gpu.json", gpu}, {"host.json", p}}, "m");
            }).find("host.json is a host-transport run"),
            std::string::npos);
}

TEST(ClusterProfile, MergeSingleProcessSweepWithItsGpuProfile) {
  const Json gpu = read_json_file(kSrc + "/hardware/profiles/h200-sxm-141gb.json");
  const Json comm = read_json_file(kSrc + "/docs/data/h200x2_nccl.json");
  const Json m = merge_cluster_profiles({{"h200.json", gpu}, {"h200x2_nccl.json", comm}}, "merge");
  EXPECT_EQ(m.at("cluster").at("gpu"), "h200-sxm-141gb");
  EXPECT_EQ(m.at("cluster").at("nodes"), 1);
  EXPECT_EQ(m.at("cluster").at("gpus_per_node"), 2);
  ASSERT_EQ(m.at("gpu_profiles").size(), 1u);
  EXPECT_EQ(m.at("gpu_profiles")[0].at("gpu"), "h200-sxm-141gb");
  EXPECT_TRUE(m.at("comm").contains("model"));
  EXPECT_EQ(m.at("sources").size(), 2u);
}

TEST(ClusterProfile, MergeRefusesWhatDoesNotFit) {
  const Json h200 = read_json_file(kSrc + "/hardware/profiles/h200-sxm-141gb.json");
  const Json h100 = read_json_file(kSrc + "/hardware/profiles/h100-sxm5-80gb.json");
  const Json run = build_cluster_profile(two_h200_run());
  EXPECT_NE(error_of([&] {
              merge_cluster_profiles({{"a.json", h200}, {"b.json", h200}}, "m");
            }).find("b.json and a.json are both profiles of h200-sxm-141gb"),
            std::string::npos);
  const std::string e = error_of([&] {
    merge_cluster_profiles({{"h100.json", h100}, {"run.json", run}}, "m");
  });
  EXPECT_NE(
      e.find("run.json measured h200-sxm-141gb but no GPU profile of it was given (have: h100-sxm5-80gb "
             "(h100.json))"),
      std::string::npos)
      << e;
  EXPECT_NE(error_of([&] {
              merge_cluster_profiles({{"r1.json", run}, {"r2.json", run}}, "m");
            }).find("both hold a communication calibration"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              merge_cluster_profiles({{"x.json", Json{{"a", 1}}}}, "m");
            }).find("x.json: neither"),
            std::string::npos);
  // A cluster profile and the GPU profile of its model merge.
  const Json ok = merge_cluster_profiles({{"h200.json", h200}, {"run.json", run}}, "m");
  EXPECT_EQ(ok.at("gpu_profiles").size(), 1u);
  EXPECT_EQ(ok.at("comm").at("model"), run.at("comm").at("model"));
}

}  // namespace
}  // namespace infraplan::ccal
