#include "hardware/gpu_spec.hpp"

#include <algorithm>
#include <cctype>

#include "common/error.hpp"

namespace infraplan::hw {

std::optional<double> GpuSpec::peak(Dtype d) const {
  auto it = peak_flops.find(d);
  if (it == peak_flops.end() || it->second <= 0) return std::nullopt;
  return it->second;
}

namespace {

constexpr double T = 1e12;
constexpr double MiB = 1024.0 * 1024.0;

// Memory capacities are what the driver reports (nvidia-smi "Total"), which is what a framework
// can allocate from; bandwidths and FLOP/s are the datasheets' dense (non-sparse) figures.
std::vector<GpuSpec> build_catalog() {
  std::vector<GpuSpec> c;
  {
    GpuSpec g;
    g.name = "a100-sxm4-40gb";
    g.display_name = "NVIDIA A100 SXM4 40GB";
    g.source = "NVIDIA A100 Tensor Core GPU datasheet (2021), SXM column";
    g.compute_capability = 80;
    g.peak_flops = {{Dtype::FP64, 19.5 * T}, {Dtype::FP32, 19.5 * T}, {Dtype::TF32, 156 * T},
                    {Dtype::BF16, 312 * T},  {Dtype::FP16, 312 * T},  {Dtype::INT8, 624 * T}};
    g.hbm_bytes = 40960 * MiB;
    g.hbm_GBps = 1555;
    g.l2_bytes = 40 * MiB;
    g.sms = 108;
    g.smem_per_sm_bytes = 164 * 1024;
    g.nvlink_gen = 3;
    g.nvlink_GBps = 300;
    g.pcie_gen = 4;
    g.pcie_GBps = 32;
    g.tdp_watts = 400;
    c.push_back(g);
    g.name = "a100-sxm4-80gb";
    g.display_name = "NVIDIA A100 SXM4 80GB";
    g.hbm_bytes = 81920 * MiB;
    g.hbm_GBps = 2039;
    c.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "h100-sxm5-80gb";
    g.display_name = "NVIDIA H100 SXM5 80GB";
    g.source = "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column, dense";
    g.compute_capability = 90;
    g.peak_flops = {{Dtype::FP64, 67 * T},    {Dtype::FP32, 67 * T},    {Dtype::TF32, 494.7 * T},
                    {Dtype::BF16, 989.4 * T}, {Dtype::FP16, 989.4 * T}, {Dtype::FP8, 1978.9 * T},
                    {Dtype::INT8, 1978.9 * T}};
    g.hbm_bytes = 81559 * MiB;
    g.hbm_GBps = 3350;
    g.l2_bytes = 50 * MiB;
    g.sms = 132;
    g.smem_per_sm_bytes = 228 * 1024;
    g.nvlink_gen = 4;
    g.nvlink_GBps = 450;
    g.pcie_gen = 5;
    g.pcie_GBps = 64;
    g.tdp_watts = 700;
    c.push_back(g);

    GpuSpec p = g;
    p.name = "h100-pcie-80gb";
    p.display_name = "NVIDIA H100 PCIe 80GB";
    p.source = "NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe column, dense";
    p.peak_flops = {{Dtype::FP64, 51 * T},  {Dtype::FP32, 51 * T},  {Dtype::TF32, 378 * T},
                    {Dtype::BF16, 756 * T}, {Dtype::FP16, 756 * T}, {Dtype::FP8, 1513 * T},
                    {Dtype::INT8, 1513 * T}};
    p.hbm_GBps = 2000;
    p.sms = 114;
    p.nvlink_GBps = 300;  // optional NVLink bridge pairs: 600 GB/s bidirectional
    p.tdp_watts = 350;
    c.push_back(p);

    GpuSpec h = g;
    h.name = "h200-sxm-141gb";
    h.display_name = "NVIDIA H200 SXM 141GB";
    h.source =
        "NVIDIA H200 Tensor Core GPU datasheet (2024), SXM column, dense; memory and L2 as reported by "
        "the driver (nvidia-smi, cudaGetDeviceProperties) on an H200 SXM";
    h.hbm_bytes = 143771 * MiB;
    h.hbm_GBps = 4800;
    h.l2_bytes = 60 * MiB;
    c.push_back(h);
  }
  {
    GpuSpec g;
    g.name = "b200-sxm-180gb";
    g.display_name = "NVIDIA B200 SXM 180GB";
    g.source = "NVIDIA DGX B200 / HGX B200 datasheets (2024), per GPU, dense";
    g.compute_capability = 100;
    g.peak_flops = {{Dtype::FP64, 40 * T},   {Dtype::FP32, 80 * T},   {Dtype::TF32, 1100 * T},
                    {Dtype::BF16, 2250 * T}, {Dtype::FP16, 2250 * T}, {Dtype::FP8, 4500 * T},
                    {Dtype::INT8, 4500 * T}, {Dtype::FP4, 9000 * T}};
    g.hbm_bytes = 183359 * MiB;
    g.hbm_GBps = 8000;
    g.l2_bytes = 126 * MiB;
    g.sms = 148;
    g.smem_per_sm_bytes = 228 * 1024;
    g.nvlink_gen = 5;
    g.nvlink_GBps = 900;
    g.pcie_gen = 5;
    g.pcie_GBps = 64;
    g.tdp_watts = 1000;
    c.push_back(g);
  }
  {
    GpuSpec g;
    g.name = "l40s";
    g.display_name = "NVIDIA L40S 48GB";
    g.source = "NVIDIA L40S datasheet (2023), dense";
    g.compute_capability = 89;
    g.peak_flops = {{Dtype::FP64, 1.41 * T}, {Dtype::FP32, 91.6 * T}, {Dtype::TF32, 183 * T},
                    {Dtype::BF16, 362 * T},  {Dtype::FP16, 362 * T},  {Dtype::FP8, 733 * T},
                    {Dtype::INT8, 733 * T}};
    g.hbm_bytes = 46068 * MiB;
    g.hbm_GBps = 864;
    g.l2_bytes = 96 * MiB;
    g.sms = 142;
    g.smem_per_sm_bytes = 100 * 1024;
    g.nvlink_gen = 0;
    g.nvlink_GBps = 0;
    g.pcie_gen = 4;
    g.pcie_GBps = 32;
    g.tdp_watts = 350;
    c.push_back(g);
  }
  std::sort(c.begin(), c.end(), [](const GpuSpec& a, const GpuSpec& b) { return a.name < b.name; });
  return c;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> c = build_catalog();
  return c;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> n;
  for (const auto& g : gpu_catalog()) n.push_back(g.name);
  return n;
}

const GpuSpec& find_gpu(const std::string& name) {
  for (const auto& g : gpu_catalog())
    if (g.name == name) return g;
  throw Error(unknown_name_message("GPU", name, gpu_names()));
}

bool device_name_fits(const GpuSpec& g, const std::string& device_name) {
  auto upper = [](std::string s) {
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string dev = upper(device_name), cat = upper(g.display_name);
  for (const char* board : {"NVL", "PCIE", "GH200", "GB200"})
    if (dev.find(board) != std::string::npos && cat.find(board) == std::string::npos) return false;
  return true;
}

const GpuSpec* find_gpu_by_device_name(const std::string& device_name, double memory_bytes) {
  auto has = [&](const char* token) { return device_name.find(token) != std::string::npos; };
  const char* name = nullptr;
  if (has("H200"))
    name = "h200-sxm-141gb";
  else if (has("B200"))
    name = "b200-sxm-180gb";
  else if (has("L40S"))
    name = "l40s";
  else if (has("H100"))
    name = has("PCIe") ? "h100-pcie-80gb" : "h100-sxm5-80gb";
  else if (has("A100"))
    name = has("40GB") || (memory_bytes > 0 && memory_bytes < 60e9) ? "a100-sxm4-40gb" : "a100-sxm4-80gb";
  if (!name) return nullptr;
  for (const auto& g : gpu_catalog())
    if (g.name == name) return device_name_fits(g, device_name) ? &g : nullptr;
  return nullptr;
}

}  // namespace infraplan::hw
