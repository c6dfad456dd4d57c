#pragma once
// RooflineCostModel: time = max(FLOPs / peak, bytes / HBM bandwidth) + launch overhead, from
// datasheet numbers only. The baseline before calibration, and the shape that calibrated
// profiles correct with measured efficiency.
#include "hardware/cost_model.hpp"

namespace infraplan::hw {

class RooflineCostModel final : public CostModel {
 public:
  /// `launch_seconds`: per-kernel launch overhead added to every op (5 µs by default, the order
  /// of a CUDA launch plus framework dispatch; replace by a measured profile).
  explicit RooflineCostModel(GpuSpec gpu, double launch_seconds = 5e-6);

  const GpuSpec& gpu() const override { return gpu_; }
  CostEstimate gemm(const GemmShape& s) const override;
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override;
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override;
  CostEstimate memory_bound(double bytes) const override;
  double launch_overhead_seconds() const override { return launch_; }

  /// Peak FLOP/s for `d`; throws infraplan::Error when the GPU has no tensor-core path for it.
  double peak_flops(Dtype d) const;

 private:
  GpuSpec gpu_;
  double launch_;
};

/// Bytes a GEMM moves at minimum (A, B read once, C written once; fp32 output for tf32/fp32,
/// 32-bit for int8, 16-bit otherwise).
double gemm_min_bytes(const GemmShape& s);

}  // namespace infraplan::hw
