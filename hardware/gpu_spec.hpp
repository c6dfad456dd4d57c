#pragma once
// GPU datasheet numbers. Every catalog entry names the document its numbers come from.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"

namespace infraplan::hw {

/// One GPU model as its vendor's datasheet describes it (dense, i.e. without 2:4 sparsity).
struct GpuSpec {
  std::string name;                    ///< catalog key, e.g. "h100-sxm5-80gb"
  std::string display_name;            ///< e.g. "NVIDIA H100 SXM5 80GB"
  std::string source;                  ///< datasheet the numbers come from
  int compute_capability = 0;          ///< 80 = sm_80, 90 = sm_90, 100 = sm_100, 89 = sm_89
  std::map<Dtype, double> peak_flops;  ///< dense peak FLOP/s (OP/s for int8) per format
  double hbm_bytes = 0;                ///< device memory capacity in bytes
  double hbm_GBps = 0;                 ///< device memory bandwidth, 1e9 B/s
  double l2_bytes = 0;                 ///< L2 cache size in bytes
  int sms = 0;                         ///< streaming multiprocessors
  double smem_per_sm_bytes = 0;        ///< max shared memory per SM in bytes
  int nvlink_gen = 0;                  ///< 0 = no NVLink
  double nvlink_GBps = 0;              ///< NVLink bandwidth per GPU per direction, 1e9 B/s
  int pcie_gen = 0;                    ///< PCIe generation of the host link
  double pcie_GBps = 0;                ///< PCIe x16 bandwidth per direction, 1e9 B/s
  double tdp_watts = 0;                ///< board power

  /// Dense peak for `d`, or nullopt when the tensor cores do not support it.
  std::optional<double> peak(Dtype d) const;
  /// True when the hardware runs `d` GEMMs natively (fp8 needs sm_89+, fp4 needs sm_100+).
  bool supports(Dtype d) const { return peak(d).has_value(); }
  /// Memory capacity in GiB (2^30 B).
  double hbm_GiB() const { return hbm_bytes / (1024.0 * 1024.0 * 1024.0); }
};

/// The built-in catalog, sorted by name.
const std::vector<GpuSpec>& gpu_catalog();
/// Looks a GPU up by catalog name; throws infraplan::Error with suggestions when unknown.
const GpuSpec& find_gpu(const std::string& name);
/// Catalog names.
std::vector<std::string> gpu_names();
/// False when the driver's device name names a board the catalog entry is not: an NVL (PCIe card
/// with an NVLink bridge, lower power limit), a PCIe card, or a Grace superchip (GH200, GB200) share
/// a chip, SM count and memory size with an SXM entry but not its power, clocks or links. Tokens
/// are compared without case ("NVIDIA H200 NVL" is not "NVIDIA H200 SXM 141GB"; "NVIDIA H200" is).
bool device_name_fits(const GpuSpec& g, const std::string& device_name);
/// The catalog entry of a GPU as its driver names it ("NVIDIA H200", "NVIDIA H100 80GB HBM3",
/// "NVIDIA A100-SXM4-80GB", ...), told apart by `memory_bytes` where the name alone is not enough;
/// nullptr when the catalog has no such GPU (or only another board of its chip: device_name_fits).
const GpuSpec* find_gpu_by_device_name(const std::string& device_name, double memory_bytes = 0);

}  // namespace infraplan::hw
