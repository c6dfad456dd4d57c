#include "hardware/gpu_spec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "common/error.hpp"

using namespace infraplan;
using namespace infraplan::hw;

TEST(GpuCatalog, HasTheDatasheetGpus) {
  for (const char* n : {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
                        "h200-sxm-141gb", "b200-sxm-180gb", "l40s"}) {
    const auto& g = find_gpu(n);
    EXPECT_FALSE(g.source.empty()) << n;
    EXPECT_GT(g.hbm_bytes, 0) << n;
    EXPECT_GT(g.hbm_GBps, 0) << n;
    EXPECT_GT(g.sms, 0) << n;
    EXPECT_TRUE(g.supports(Dtype::BF16)) << n;
  }
}

TEST(GpuCatalog, DatasheetNumbers) {
  const auto& h100 = find_gpu("h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(*h100.peak(Dtype::BF16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100.hbm_GBps, 3350);
  EXPECT_DOUBLE_EQ(h100.nvlink_GBps, 450);
  EXPECT_DOUBLE_EQ(h100.l2_bytes, 50.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(h100.smem_per_sm_bytes, 228.0 * 1024);
  const auto& h200 = find_gpu("h200-sxm-141gb");
  EXPECT_DOUBLE_EQ(*h200.peak(Dtype::BF16), *h100.peak(Dtype::BF16));
  EXPECT_GT(h200.hbm_GBps / h100.hbm_GBps, 1.4);
  // A100: no fp8; Hopper: no fp4; Blackwell: fp4.
  EXPECT_FALSE(find_gpu("a100-sxm4-80gb").supports(Dtype::FP8));
  EXPECT_TRUE(find_gpu("a100-sxm4-80gb").supports(Dtype::INT8));
  EXPECT_FALSE(h100.supports(Dtype::FP4));
  EXPECT_TRUE(find_gpu("b200-sxm-180gb").supports(Dtype::FP4));
  EXPECT_TRUE(find_gpu("l40s").supports(Dtype::FP8));
  EXPECT_EQ(find_gpu("l40s").nvlink_gen, 0);
}

TEST(GpuCatalog, UnknownGpuSuggests) {
  try {
    find_gpu("h100");
    FAIL();
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("did you mean"), std::string::npos) << w;
    EXPECT_NE(w.find("h100-sxm5-80gb"), std::string::npos) << w;
  }
}

TEST(GpuCatalog, DeviceNamesMapToTheirOwnBoardOnly) {
  // Driver names and the catalog entry each maps to; "" = none: the same chip on another board
  // (power limit, clocks, links) is not the SXM entry.
  const std::pair<const char*, const char*> cases[] = {{"NVIDIA H200", "h200-sxm-141gb"},
                                                       {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},
                                                       {"NVIDIA H100 PCIe", "h100-pcie-80gb"},
                                                       {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
                                                       {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
                                                       {"NVIDIA B200", "b200-sxm-180gb"},
                                                       {"NVIDIA H200 NVL", ""},
                                                       {"NVIDIA H100 NVL", ""},
                                                       {"NVIDIA GH200 480GB", ""},
                                                       {"NVIDIA GB200", ""},
                                                       {"NVIDIA A100-PCIE-40GB", ""},
                                                       {"NVIDIA A100 80GB PCIe", ""}};
  for (const auto& [device, expected] : cases) {
    const GpuSpec* g = find_gpu_by_device_name(device);
    EXPECT_EQ(g ? g->name : std::string(), expected) << device;
  }
  EXPECT_TRUE(device_name_fits(find_gpu("h100-pcie-80gb"), "NVIDIA H100 PCIe"));
  EXPECT_FALSE(device_name_fits(find_gpu("h200-sxm-141gb"), "nvidia h200 nvl"));
}
