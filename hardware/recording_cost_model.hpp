#pragma once
// A CostModel that answers through another one and keeps every GEMM shape asked of it: the exact
// shapes a simulated workload runs, for `infraplan-calibrate --shapes` to time on the GPU
// (docs/calibration.md, "Exact shapes of a workload").
#include <map>
#include <mutex>
#include <tuple>

#include "hardware/cost_model.hpp"
#include "common/json_util.hpp"

namespace infraplan::hw {

class RecordingCostModel : public CostModel {
 public:
  explicit RecordingCostModel(const CostModel& inner) : inner_(inner) {}
  const GpuSpec& gpu() const override { return inner_.gpu(); }
  CostEstimate gemm(const GemmShape& s) const override;
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override {
    return inner_.attention_prefill(s);
  }
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override {
    return inner_.attention_decode(s);
  }
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

  /// {"gemm_shapes": [{dtype, m, n, k, layout, calls, predicted_seconds}]}: one entry per distinct
  /// (format, m, n, k, layout), calls = GEMMs asked (batch counted), predicted_seconds = their total under
  /// the inner model; ordered by predicted_seconds, largest first (ties: format, m, n, k).
  Json shapes_json() const;
  std::size_t distinct_shapes() const;

 private:
  struct Seen {
    double calls = 0, seconds = 0;
  };
  const CostModel& inner_;
  mutable std::mutex mu_;
  mutable std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, int>, Seen> seen_;
};

}  // namespace infraplan::hw
