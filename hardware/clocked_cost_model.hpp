#pragma once
// A CostModel that answers through another one at a given SM clock: GEMM and attention-prefill
// times follow the clock as the profile measured (t · (reference / clock)^exponent, the format's
// exponent; attention takes bf16's), memory-bound kernels, decode attention and everything host-side
// stay as they are. The training simulator prices a step at the clock the power law gives it
// (simulator/sustained_clock.hpp).
#include "hardware/forwarding_cost_model.hpp"

namespace infraplan::hw {

class ClockedCostModel final : public ForwardingCostModel {
 public:
  /// `mhz` > 0; an inner model without a reference clock answers unchanged.
  ClockedCostModel(const CostModel& inner, double mhz) : ForwardingCostModel(inner), mhz_(mhz) {}
  double clock_mhz() const { return mhz_; }
  /// The time factor of a format at this clock (1 without a reference clock).
  double factor(Dtype d) const;
  CostEstimate gemm(const GemmShape& s) const override { return scaled(inner_.gemm(s), factor(s.dtype)); }
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override {
    return scaled(inner_.attention_prefill(s), factor(Dtype::BF16));
  }
  std::optional<CostEstimate> attention_prefill_launch(const AttentionPrefillLaunch& l) const override {
    auto e = inner_.attention_prefill_launch(l);
    if (e) *e = scaled(*e, factor(Dtype::BF16));
    return e;
  }

 private:
  static CostEstimate scaled(CostEstimate e, double f);
  double mhz_;
};

}  // namespace infraplan::hw
