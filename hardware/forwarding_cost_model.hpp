#pragma once
// A CostModel that answers every question through another one: the base of the wrappers that
// change a few answers (spread edges, a clock, recording the shapes asked) and pass the rest on.
#include <optional>
#include <string>

#include "hardware/cost_model.hpp"

namespace infraplan::hw {

class ForwardingCostModel : public CostModel {
 public:
  explicit ForwardingCostModel(const CostModel& inner) : inner_(inner) {}
  const GpuSpec& gpu() const override { return inner_.gpu(); }
  CostEstimate gemm(const GemmShape& s) const override { return inner_.gemm(s); }
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override {
    return inner_.attention_prefill(s);
  }
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override { return inner_.attention_decode(s); }
  std::optional<CostEstimate> attention_prefill_launch(const AttentionPrefillLaunch& l) const override {
    return inner_.attention_prefill_launch(l);
  }
  CostEstimate memory_bound(double bytes) const override { return inner_.memory_bound(bytes); }
  double launch_overhead_seconds() const override { return inner_.launch_overhead_seconds(); }
  CostEstimate memory_bound_queued(double bytes) const override { return inner_.memory_bound_queued(bytes); }
  double graph_kernel_seconds() const override { return inner_.graph_kernel_seconds(); }
  double eager_kernel_gap_seconds() const override { return inner_.eager_kernel_gap_seconds(); }
  double memory_clock_factor(double clock_share) const override {
    return inner_.memory_clock_factor(clock_share);
  }
  std::optional<double> row_kernel_seconds(const std::string& kind, double rows, double width) const override {
    return inner_.row_kernel_seconds(kind, rows, width);
  }
  double framework_op_seconds() const override { return inner_.framework_op_seconds(); }
  const Profile* measured_profile() const override { return inner_.measured_profile(); }
  double reference_clock_mhz() const override { return inner_.reference_clock_mhz(); }
  double clock_exponent(Dtype d) const override { return inner_.clock_exponent(d); }
  const PowerModel* power_model() const override { return inner_.power_model(); }
  double power_limiter_tau_s() const override { return inner_.power_limiter_tau_s(); }
  double idle_power_w() const override { return inner_.idle_power_w(); }
  double host_time_factor() const override { return inner_.host_time_factor(); }

 protected:
  const CostModel& inner_;
};

}  // namespace infraplan::hw
