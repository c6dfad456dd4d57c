#include "collectives/comm_model.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "common/error.hpp"
#include "model/model_math.hpp"
#include "model/model_spec.hpp"

namespace infraplan::coll {
namespace {

std::vector<int> iota(int n, int start = 0, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(start + i * stride);
  return v;
}

hw::Cluster pcie_node() {
  hw::Cluster c = hw::cluster_preset("dgx-h100");
  c.intra.kind = hw::IntraKind::PCIe;
  c.intra.GBps_per_gpu = 64;  // PCIe Gen5 x16 per direction
  c.pcie_latency_us = 0.7;    // same hop latency as NVLink: isolate bandwidth
  return c;
}

TEST(Collective, NcclTestsBusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::ReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllToAll, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::SendRecv, 2), 1.0);
  EXPECT_DOUBLE_EQ(algbw_GBps(1e9, 0.01), 100.0);
  EXPECT_EQ(parse_op("allreduce"), CollectiveOp::AllReduce);
  EXPECT_EQ(parse_op("a2a"), CollectiveOp::AllToAll);
  EXPECT_THROW(parse_op("all_reduse"), Error);
}

TEST(CommModel, RingAllReduceMovesTwoNMinusOneOverNPerRank) {
  CommModel m(hw::cluster_preset("dgx-h100", 2), CommProfile::ideal());
  const double S = 1 << 30;
  for (int n : {2, 4, 8, 16}) {
    auto e = m.estimate(CollectiveOp::AllReduce, S, iota(n), Algorithm::Ring, Protocol::Simple);
    EXPECT_NEAR(e.bytes_per_rank, 2.0 * (n - 1) / n * S, 1e-6 * S) << n;
    auto ag = m.estimate(CollectiveOp::AllGather, S, iota(n), Algorithm::Ring, Protocol::Simple);
    EXPECT_NEAR(ag.bytes_per_rank, double(n - 1) / n * S, 1e-6 * S) << n;
  }
}

TEST(CommModel, IdealRingIsAlphaBetaOnOneNode) {
  CommModel m(hw::cluster_preset("dgx-h100"), CommProfile::ideal());
  const double S = 1e9;
  auto e = m.estimate(CollectiveOp::AllReduce, S, iota(8));
  EXPECT_EQ(e.algorithm, Algorithm::Ring);
  const double expect = 14 * (0.7e-6 + S / 8 / 450e9);
  EXPECT_NEAR(e.seconds, expect, 1e-9);
  EXPECT_NEAR(e.busbw_GBps, 2.0 * 7 / 8 * S / expect / 1e9, 1e-6);
  EXPECT_NE(e.bottleneck.find("nvlink"), std::string::npos) << e.bottleneck;
}

TEST(CommModel, TwoGBAllReduceNvlink4VersusPcieGen5) {
  const double S = 2e9;
  CommModel nv(hw::cluster_preset("dgx-h100"), CommProfile::ideal());
  CommModel pc(pcie_node(), CommProfile::ideal());
  auto a = nv.estimate(CollectiveOp::AllReduce, S, iota(8));
  auto b = pc.estimate(CollectiveOp::AllReduce, S, iota(8));
  // 2(n-1)/n x 2 GB / 450 GB/s = 7.78 ms; / 64 GB/s = 54.7 ms.
  EXPECT_NEAR(a.seconds, 7.78e-3, 0.05e-3);
  EXPECT_NEAR(b.seconds, 54.7e-3, 0.2e-3);
  EXPECT_NEAR(b.seconds / a.seconds, 450.0 / 64, 0.05);
  EXPECT_NE(b.bottleneck.find("pcie"), std::string::npos) << b.bottleneck;
}

TEST(CommModel, DataParallelGradientTrafficDdpZeroStages) {
  // Psi = gradient bytes; a DP group of 64 ranks over 8 nodes.
  CommModel m(hw::cluster_preset("dgx-h100", 8), CommProfile::ideal());
  const double psi = 14e9;
  auto g = iota(64);
  const double ddp =
      m.estimate(CollectiveOp::AllReduce, psi, g, Algorithm::Ring, Protocol::Simple).bytes_per_rank;
  const double rs = m.estimate(CollectiveOp::ReduceScatter, psi, g).bytes_per_rank;
  const double ag = m.estimate(CollectiveOp::AllGather, psi, g).bytes_per_rank;
  const double zero12 = rs + ag;      // reduce-scatter grads, all-gather updated params
  const double zero3 = rs + ag + ag;  // + params gathered again for backward
  EXPECT_NEAR(ddp / psi, 2.0, 0.04);
  EXPECT_NEAR(zero12 / psi, 2.0, 0.04);
  EXPECT_NEAR(zero3 / psi, 3.0, 0.05);
  EXPECT_NEAR(ddp, zero12, 1e-6 * psi);
}

TEST(CommModel, KvCacheOfA2048TokenLlama2SequenceOver200GbIb) {
  const auto llama = model::preset("llama2-7b");
  const double kv = model::kv_bytes_per_token(llama, Dtype::FP16) * 2048;
  EXPECT_NEAR(kv / double(1 << 30), 1.0, 0.01);
  CommModel m(hw::cluster_preset("dgx-a100-80gb", 2), CommProfile::ideal());  // 200 Gb/s NICs
  auto e = m.estimate(CollectiveOp::SendRecv, kv, {0, 8});
  EXPECT_NEAR(e.seconds, 0.043, 0.003);  // 1.07 GB / 25 GB/s
  EXPECT_NE(e.bottleneck.find("nic"), std::string::npos) << e.bottleneck;
}

TEST(CommModel, TensorParallelAcrossNodesFallsOffABandwidthCliff) {
  CommModel m(hw::cluster_preset("dgx-h100", 8));
  const double S = 256e6;
  auto inside = m.estimate(CollectiveOp::AllReduce, S, iota(8));
  auto across = m.estimate(CollectiveOp::AllReduce, S, iota(8, 0, 8));
  EXPECT_EQ(inside.nodes, 1);
  EXPECT_EQ(across.nodes, 8);
  EXPECT_GT(across.seconds / inside.seconds, 5.0);
  EXPECT_GT(inside.busbw_GBps, 300);
  EXPECT_LT(across.busbw_GBps, 60);
  EXPECT_NE(across.bottleneck.find("nic"), std::string::npos) << across.bottleneck;
}

TEST(CommModel, MultiNodeRingUsesEveryNicOnItsRail) {
  CommModel m(hw::cluster_preset("dgx-h100", 2), CommProfile::ideal());
  auto e = m.estimate(CollectiveOp::AllReduce, 4e9, iota(16), Algorithm::Ring, Protocol::Simple);
  // 8 NICs x 50 GB/s per node carry the ring: busbw ~ 400 GB/s (not 50 of a single NIC).
  EXPECT_NEAR(e.busbw_GBps, 400, 10);
  EXPECT_EQ(e.bottleneck.find("leaf"), std::string::npos) << e.bottleneck;
}

TEST(CommModel, ProtocolAndAlgorithmChoice) {
  CommModel m(hw::cluster_preset("dgx-h100", 4));
  auto small = m.estimate(CollectiveOp::AllReduce, 1024, iota(8));
  EXPECT_EQ(small.protocol, Protocol::LL);
  auto big = m.estimate(CollectiveOp::AllReduce, 4e9, iota(8));
  EXPECT_EQ(big.algorithm, Algorithm::NVLS);
  auto small_multi = m.estimate(CollectiveOp::AllReduce, 4096, iota(32));
  EXPECT_NE(small_multi.algorithm, Algorithm::Ring);  // log-depth latency beats 62 ring steps
  auto big_multi = m.estimate(CollectiveOp::AllReduce, 4e9, iota(32));
  EXPECT_NE(big_multi.algorithm, Algorithm::Tree);
  EXPECT_LT(small.seconds, 50e-6);
  EXPECT_GT(small.seconds, 5e-6);
}

TEST(CommModel, ForcedAlgorithmsAndErrors) {
  CommModel m(hw::cluster_preset("dgx-h100", 2));
  EXPECT_THROW(m.estimate(CollectiveOp::AllReduce, 1e6, iota(16), Algorithm::NVLS, Protocol::Simple), Error);
  EXPECT_THROW(m.estimate(CollectiveOp::AllReduce, 1e6, {0, 99}), Error);
  EXPECT_THROW(m.estimate(CollectiveOp::AllReduce, 1e6, {1, 1}), Error);
  auto h = m.estimate(CollectiveOp::AllReduce, 1e9, iota(16), Algorithm::Hierarchical, Protocol::Simple);
  EXPECT_EQ(h.algorithm, Algorithm::Hierarchical);
  EXPECT_GT(h.seconds, 0);
  auto one = m.estimate(CollectiveOp::AllReduce, 1e9, {3});
  EXPECT_EQ(one.seconds, 0);
}

TEST(CommModel, ProfileFitsReplaceDefaults) {
  Json j = Json::parse(R"({"comm": {"fits": [
      {"op": "all_reduce", "ranks": 8, "scope": "intra", "latency_us": 20, "bw_GBps": 350}], "rows": []}})");
  CommProfile p = CommProfile::from_json(j);
  ASSERT_EQ(p.fits.size(), 1u);
  CommModel m(hw::cluster_preset("dgx-h100", 2), p);
  auto e = m.estimate(CollectiveOp::AllReduce, 1e9, iota(8));
  EXPECT_EQ(e.algorithm, Algorithm::Fit);
  EXPECT_NEAR(e.seconds, 20e-6 + 1e9 * 1.75 / 350e9, 1e-12);
  EXPECT_NEAR(e.busbw_GBps, 1.75 * 1e9 / e.seconds / 1e9, 1e-9);
  auto inter = m.estimate(CollectiveOp::AllReduce, 1e9, iota(16));  // no inter fit: model
  EXPECT_NE(inter.algorithm, Algorithm::Fit);
  EXPECT_NE(m.estimate(CollectiveOp::AllReduce, 1e9, iota(4)).algorithm, Algorithm::Fit);  // other size
  EXPECT_THROW(CommProfile::from_json(Json::parse(R"({"comm": {"fits": [{"op": "allredux"}]}})")), Error);
}

// What infraplan-calibrate writes: algbw in bw_GBps, busbw beside it, single-GPU rows that say
// nothing about links, and bookkeeping keys.
TEST(CommModel, CalibrationOutputIsReadAsBusBandwidth) {
  Json j = Json::parse(R"({"comm": {"nccl_version": "2.28.3", "env": {}, "gpus": 8, "notes": "x", "rows": [],
      "fits": [{"op": "all_reduce", "ranks": 1, "scope": "intra", "latency_us": 4, "bw_GBps": 2152, "busbw_GBps": 0},
               {"op": "all_reduce", "ranks": 8, "scope": "intra", "latency_us": 30, "bw_GBps": 200, "busbw_GBps": 350}]}})");
  CommProfile p = CommProfile::from_json(j);
  ASSERT_EQ(p.fits.size(), 1u);
  EXPECT_DOUBLE_EQ(p.fits[0].bw_GBps, 350);
}

}  // namespace
}  // namespace infraplan::coll
