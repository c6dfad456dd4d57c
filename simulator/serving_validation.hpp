#pragma once
// Predicted vs measured serving metrics: the same JSON report (`simulate serve --json` and
// `bench serve --json` both write {"metrics": {...}}) compared metric by metric — TTFT, TPOT,
// inter-token latency and end-to-end latency at p50/p90/p99, request and output-token
// throughput, goodput — with the signed relative error (predicted − measured) / measured.
#include <string>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::sim::serve {

struct MetricComparison {
  std::string metric;    ///< "ttft_ms.p50", "output_tokens_per_s", ...
  double predicted = 0;  ///< simulator, in the metric's unit
  double measured = 0;   ///< engine on the GPU
  /// (predicted − measured) / measured; 0 when both are 0; ±inf when only measured is 0.
  double error = 0;
};

/// The compared metric keys, in report order.
const std::vector<std::string>& validated_metrics();
/// Compares two "metrics" objects (as ServingMetrics::to_json writes them). Throws
/// infraplan::Error naming a key missing from either side.
std::vector<MetricComparison> compare_serving_metrics(const Json& predicted, const Json& measured);
/// {"metric": {"predicted", "measured", "error"}} for --json output.
Json comparisons_to_json(const std::vector<MetricComparison>& c);

}  // namespace infraplan::sim::serve
