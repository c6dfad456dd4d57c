#pragma once
// A CostModel that answers through another one at a given SM clock: GEMM and attention-prefill
// times follow the clock as the profile measured (t · (reference / clock)^exponent, the format's
// exponent, for a GEMM's compute-bound share; attention takes bf16's), eager framework kernels by
// their measured clock share (memory_clock_factor), other memory-bound kernels, decode attention and
// everything host-side stay as they are. The training simulator prices a step at the
// clock the power law gives it (simulator/sustained_clock.hpp); the serving simulator each step at
// the clocks the power limiter gives it (simulator/execution_backend.hpp).
#include "hardware/forwarding_cost_model.hpp"

namespace infraplan::hw {

class ClockedCostModel final : public ForwardingCostModel {
 public:
  /// `mhz` > 0; an inner model without a reference clock answers unchanged. With
  /// `eager_kernels_follow` false the eager framework kernels keep their tabled time (the power
  /// limiter's walk prices its ops that way, simulator/limited_step_clock.hpp).
  ClockedCostModel(const CostModel& inner, double mhz, bool eager_kernels_follow = true)
      : ForwardingCostModel(inner), mhz_(mhz), eager_follow_(eager_kernels_follow) {}
  double clock_mhz() const { return mhz_; }
  /// The time factor of a format at this clock (1 without a reference clock).
  double factor(Dtype d) const;
  /// A GEMM's time follows the clock in its compute-bound share only: t(f) = t_ref · ((1 − φ) +
  /// φ · (reference / f)^β) with φ = t_ref / t_bytes − 1 clamped to [0, 1], t_bytes its operand
  /// bytes at the measured copy rate: a GEMM that takes twice its bytes' time or more follows the
  /// clock fully, a weight-streaming GEMM of a few rows (t_ref ≈ t_bytes) keeps its time.
  CostEstimate gemm(const GemmShape& s) const override;
  /// φ above for `s` priced at the reference clock as `ref_seconds`.
  double compute_share(const GemmShape& s, double ref_seconds) const;
  /// (1 − φ) + φ · f_top / f for an eager kernel timed at the top clock f_top (the power law's
  /// highest clock) with clock share φ; 1 at or above the top clock and without a power law.
  double memory_clock_factor(double clock_share) const override;
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
  bool eager_follow_;
};

}  // namespace infraplan::hw
