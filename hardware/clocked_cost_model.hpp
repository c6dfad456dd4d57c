#pragma once
// A CostModel that answers through another one at a given SM clock: GEMM and attention-prefill
// times follow the clock as the profile measured (t · (reference / clock)^exponent, the format's
// exponent; attention takes bf16's), memory-bound kernels, decode attention and everything host-side
// stay as they are. The training simulator prices a step at the clock the power law gives it
// (simulator/sustained_clock.hpp).
#include "hardware/cost_model.hpp"

namespace infraplan::hw {

class ClockedCostModel final : public CostModel {
 public:
  /// `mhz` > 0; an inner model without a reference clock answers unchanged.
  ClockedCostModel(const CostModel& inner, double mhz) : inner_(inner), mhz_(mhz) {}
  double clock_mhz() const { return mhz_; }
  /// The time factor of a format at this clock (1 without a reference clock).
  double factor(Dtype d) const;

  const GpuSpec& gpu() const override { return inner_.gpu(); }
  CostEstimate gemm(const GemmShape& s) const override { return scaled(inner_.gemm(s), factor(s.dtype)); }
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override {
    return scaled(inner_.attention_prefill(s), factor(Dtype::BF16));
  }
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override { return inner_.attention_decode(s); }
  CostEstimate memory_bound(double bytes) const override { return inner_.memory_bound(bytes); }
  double launch_overhead_seconds() const override { return inner_.launch_overhead_seconds(); }
  CostEstimate memory_bound_queued(double bytes) const override { return inner_.memory_bound_queued(bytes); }
  double graph_kernel_seconds() const override { return inner_.graph_kernel_seconds(); }
  double eager_kernel_gap_seconds() const override { return inner_.eager_kernel_gap_seconds(); }
  std::optional<double> row_kernel_seconds(const std::string& kind, double rows, double width) const override {
    return inner_.row_kernel_seconds(kind, rows, width);
  }
  double framework_op_seconds() const override { return inner_.framework_op_seconds(); }
  const Profile* measured_profile() const override { return inner_.measured_profile(); }
  double reference_clock_mhz() const override { return inner_.reference_clock_mhz(); }
  double clock_exponent(Dtype d) const override { return inner_.clock_exponent(d); }
  const PowerModel* power_model() const override { return inner_.power_model(); }

 private:
  static CostEstimate scaled(CostEstimate e, double f);
  const CostModel& inner_;
  double mhz_;
};

}  // namespace infraplan::hw
