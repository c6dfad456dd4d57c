#include "hardware/reliability.hpp"

#include <gtest/gtest.h>

#include "hardware/cluster.hpp"
#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::hw;

namespace {
std::string error_of(const char* text) {
  try {
    resolve_cluster(Json::parse(text), "cluster");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Reliability, ClusterKeysParseWithDefaults) {
  auto c = resolve_cluster(Json::parse(R"({"preset": "dgx-h100", "nodes": 4, "price_per_gpu_hour": 1.75,
      "reliability": {"gpu_mtbf_hours": 50000, "restart_s": 300}, "storage": {"checkpoint_write_GBps": 100}})"));
  EXPECT_DOUBLE_EQ(c.price_per_gpu_hour, 1.75);
  EXPECT_EQ(c.price_source, "cluster.price_per_gpu_hour");
  EXPECT_DOUBLE_EQ(c.reliability.gpu_mtbf_hours, 50000);
  EXPECT_DOUBLE_EQ(c.reliability.node_mtbf_hours, Reliability{}.node_mtbf_hours);
  EXPECT_DOUBLE_EQ(c.reliability.restart_s, 300);
  EXPECT_DOUBLE_EQ(c.storage.checkpoint_write_GBps, 100);
  EXPECT_DOUBLE_EQ(c.storage.checkpoint_read_GBps, Storage{}.checkpoint_read_GBps);
  const Json j = c.to_json();
  EXPECT_DOUBLE_EQ(j.at("reliability").at("gpu_mtbf_hours").get<double>(), 50000);
  EXPECT_DOUBLE_EQ(j.at("storage").at("checkpoint_write_GBps").get<double>(), 100);
  // A preset takes its GPU's indicative price; another GPU takes its own.
  EXPECT_GT(cluster_preset("dgx-h100").price_per_gpu_hour, 0);
  EXPECT_GT(resolve_cluster(Json::parse(R"({"preset": "dgx-h100", "gpu": "h200-sxm-141gb"})")).price_per_gpu_hour,
            cluster_preset("dgx-h100").price_per_gpu_hour);
}

TEST(Reliability, BadValuesNameTheField) {
  EXPECT_NE(error_of(R"({"preset": "dgx-h100", "reliability": {"gpu_mtbf_hours": 0}})")
                .find("cluster.reliability.gpu_mtbf_hours=0 is invalid: must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"preset": "dgx-h100", "reliability": {"node_mtbf": 5}})").find("node_mtbf_hours"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"preset": "dgx-h100", "storage": {"checkpoint_read_GBps": -1}})")
                .find("cluster.storage.checkpoint_read_GBps=-1 is invalid"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"preset": "dgx-h100", "price_per_gpu_hour": -2})").find("price_per_gpu_hour"),
            std::string::npos);
}

// A job stops at the first failure of any part: rates add up, so the job's MTBF falls as 1/size.
TEST(Reliability, JobFailureRateScalesWithTheCluster) {
  const Reliability r;
  EXPECT_NEAR(job_failures_per_hour(r, 16384, 2048) * 54 * 24, 419, 0.5);  // Llama 3, Table 5
  EXPECT_NEAR(job_failures_per_hour(r, 2048, 256), job_failures_per_hour(r, 16384, 2048) / 8, 1e-12);
}
