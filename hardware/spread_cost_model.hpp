#pragma once
// The measured spread of op times (Profile::spread: between calibration runs on separate machine
// starts, and the machines' medians) carried into predictions: a SpreadCostModel answers through
// another model with every op of a kind scaled to the low or the high edge of that kind's band, so
// that a simulation run on it gives the low or high end of the prediction's range
// (iteration_time_range_s, ttft_range_s, ...). Kinds without a measured band (communication, host
// dispatch, launch overhead) are not scaled.
#include <optional>
#include <string>
#include <utility>

#include "hardware/cost_model.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw {

/// The bands a prediction carries, by op kind (relative; low ≤ 0 ≤ high).
struct SpreadBands {
  std::optional<Profile::SpreadBand> gemm, attention, memory;
  std::string method;  ///< how they were measured (Profile::spread_method)
  /// True when any kind has a band with low < high.
  bool known() const;
  /// The band of a CostModel op kind: "gemm", "attention" (prefill and decode), "memory".
  std::optional<Profile::SpreadBand> of(const std::string& kind) const;
  /// [t·(1 + low), t·(1 + high)] for kind `kind`, nullopt without a band.
  std::optional<std::pair<double, double>> range(const std::string& kind, double seconds) const;
};

/// The bands of a profile (empty when it records none).
SpreadBands spread_bands(const Profile& p);

/// Answers through `inner`, each GEMM, attention and memory-bound op (queued or not) scaled by
/// (1 + low) when `edge` is Low, (1 + high) when High; launch, graph-kernel and host floors and
/// kinds without a band as `inner`.
class SpreadCostModel final : public CostModel {
 public:
  enum class Edge { Low, High };
  SpreadCostModel(const CostModel& inner, SpreadBands bands, Edge edge)
      : inner_(inner), bands_(std::move(bands)), edge_(edge) {}
  const GpuSpec& gpu() const override { return inner_.gpu(); }
  CostEstimate gemm(const GemmShape& s) const override { return scaled(inner_.gemm(s), bands_.gemm); }
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override {
    return scaled(inner_.attention_prefill(s), bands_.attention);
  }
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override {
    return scaled(inner_.attention_decode(s), bands_.attention);
  }
  CostEstimate memory_bound(double bytes) const override {
    return scaled(inner_.memory_bound(bytes), bands_.memory);
  }
  double launch_overhead_seconds() const override { return inner_.launch_overhead_seconds(); }
  CostEstimate memory_bound_queued(double bytes) const override {
    return scaled(inner_.memory_bound_queued(bytes), bands_.memory);
  }
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
  CostEstimate scaled(CostEstimate e, const std::optional<Profile::SpreadBand>& b) const;
  const CostModel& inner_;
  SpreadBands bands_;
  Edge edge_;
};

}  // namespace infraplan::hw
