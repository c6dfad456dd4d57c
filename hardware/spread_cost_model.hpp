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

#include "hardware/forwarding_cost_model.hpp"
#include "hardware/profile.hpp"

namespace infraplan::hw {

/// The bands a prediction carries, by op kind (relative; low ≤ 0 ≤ high).
struct SpreadBands {
  std::optional<Profile::SpreadBand> gemm, attention, memory;
  /// Framework host costs per LLaMA block across calibration runs (framework.block_host_runs)
  /// against the median the profile uses.
  std::optional<Profile::SpreadBand> host;
  std::string method;  ///< how they were measured (Profile::spread_method)
  /// True when any kind has a band with low < high.
  bool known() const;
  /// The band of a CostModel op kind: "gemm", "attention" (prefill and decode), "memory", "host".
  std::optional<Profile::SpreadBand> of(const std::string& kind) const;
  /// [t·(1 + low), t·(1 + high)] for kind `kind`, nullopt without a band.
  std::optional<std::pair<double, double>> range(const std::string& kind, double seconds) const;
};

/// The bands of a profile (empty when it records none).
SpreadBands spread_bands(const Profile& p);

/// Answers through `inner`, each GEMM, attention and memory-bound op (queued or not) scaled by
/// (1 + low) when `edge` is Low, (1 + high) when High, framework host costs by the host band;
/// launch and graph-kernel floors and kinds without a band as `inner`.
class SpreadCostModel final : public ForwardingCostModel {
 public:
  enum class Edge { Low, High };
  SpreadCostModel(const CostModel& inner, SpreadBands bands, Edge edge)
      : ForwardingCostModel(inner), bands_(std::move(bands)), edge_(edge) {}
  CostEstimate gemm(const GemmShape& s) const override { return scaled(inner_.gemm(s), bands_.gemm); }
  CostEstimate attention_prefill(const AttentionPrefillShape& s) const override {
    return scaled(inner_.attention_prefill(s), bands_.attention);
  }
  std::optional<CostEstimate> attention_prefill_launch(const AttentionPrefillLaunch& l) const override {
    auto e = inner_.attention_prefill_launch(l);
    if (e) *e = scaled(*e, bands_.attention);
    return e;
  }
  CostEstimate attention_decode(const AttentionDecodeShape& s) const override {
    return scaled(inner_.attention_decode(s), bands_.attention);
  }
  CostEstimate memory_bound(double bytes) const override {
    return scaled(inner_.memory_bound(bytes), bands_.memory);
  }
  CostEstimate memory_bound_queued(double bytes) const override {
    return scaled(inner_.memory_bound_queued(bytes), bands_.memory);
  }
  double host_time_factor() const override;

 private:
  CostEstimate scaled(CostEstimate e, const std::optional<Profile::SpreadBand>& b) const;
  SpreadBands bands_;
  Edge edge_;
};

}  // namespace infraplan::hw
