#pragma once
// A CostModel that answers through another one and keeps every GEMM shape asked of it: the exact
// shapes a simulated workload runs, for `infraplan-calibrate --shapes` to time on the GPU
// (docs/calibration.md, "Exact shapes of a workload").
#include <map>
#include <mutex>
#include <tuple>

#include "hardware/forwarding_cost_model.hpp"
#include "common/json_util.hpp"

namespace infraplan::hw {

class RecordingCostModel : public ForwardingCostModel {
 public:
  explicit RecordingCostModel(const CostModel& inner) : ForwardingCostModel(inner) {}
  CostEstimate gemm(const GemmShape& s) const override;

  /// {"gemm_shapes": [{dtype, m, n, k, layout, calls, predicted_seconds}]}: one entry per distinct
  /// (format, m, n, k, layout), calls = GEMMs asked (batch counted), predicted_seconds = their total under
  /// the inner model; ordered by predicted_seconds, largest first (ties: format, m, n, k).
  Json shapes_json() const;
  std::size_t distinct_shapes() const;

 private:
  struct Seen {
    double calls = 0, seconds = 0;
  };
  mutable std::mutex mu_;
  mutable std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, int>, Seen> seen_;
};

}  // namespace infraplan::hw
