#include "simulator/serving_validation.hpp"

#include <cmath>
#include <limits>

#include "common/error.hpp"

namespace infraplan::sim::serve {

const std::vector<std::string>& validated_metrics() {
  static const std::vector<std::string> m = {
      "ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99",    "tpot_ms.p50",         "tpot_ms.p90",
      "tpot_ms.p99", "itl_ms.p50",  "itl_ms.p90",     "itl_ms.p99",          "e2e_ms.p50",
      "e2e_ms.p90",  "e2e_ms.p99",  "throughput_rps", "output_tokens_per_s", "goodput_rps"};
  return m;
}

namespace {
double lookup(const Json& metrics, const std::string& key, const char* side) {
  const Json* j = &metrics;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!j->is_object() || !j->contains(part))
      throw Error(std::string(side) + " metrics have no '" + key +
                  "'; expected the report of simulate/bench serve --json");
    j = &(*j)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!j->is_number()) throw Error(std::string(side) + " metric '" + key + "' is not a number");
  return j->get<double>();
}
}  // namespace

std::vector<MetricComparison> compare_serving_metrics(const Json& predicted, const Json& measured) {
  std::vector<MetricComparison> out;
  for (const std::string& k : validated_metrics()) {
    MetricComparison c;
    c.metric = k;
    c.predicted = lookup(predicted, k, "predicted");
    c.measured = lookup(measured, k, "measured");
    if (c.measured != 0)
      c.error = (c.predicted - c.measured) / c.measured;
    else
      c.error = c.predicted == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), c.predicted);
    out.push_back(c);
  }
  return out;
}

Json comparisons_to_json(const std::vector<MetricComparison>& cs) {
  Json j = Json::object();
  for (const auto& c : cs) {
    Json e = {{"predicted", c.predicted}, {"measured", c.measured}};
    if (std::isfinite(c.error))
      e["error"] = std::round(c.error * 1e6) / 1e6;
    else
      e["error"] = nullptr;
    j[c.metric] = e;
  }
  return j;
}

}  // namespace infraplan::sim::serve
