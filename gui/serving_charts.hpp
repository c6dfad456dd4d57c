#pragma once
// The Serving tab's charts, from a simulated request stream (simulator/serving_sim.hpp):
// the empirical CDF of time to first token and time per output token over all requests, and
// the engine's KV-cache use over simulated time.
#include <QString>
#include <vector>

#include "simulator/serving_sim.hpp"

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace infraplan::gui {

/// (value, cumulative fraction) points of the empirical CDF of `values` (non-positive values
/// dropped), at most `max_points` of them, the largest value always included.
std::vector<std::pair<double, double>> cdf_points(std::vector<double> values, std::size_t max_points = 400);

/// Latency CDF: TTFT and TPOT in milliseconds on a log axis, with the SLO targets when set.
QChart* build_latency_cdf_chart(const sim::serve::ServingResult& r, const sim::serve::Slo& slo);

/// KV-cache use (percent of blocks) and running/waiting sequences over simulated time.
QChart* build_kv_usage_chart(const sim::serve::ServingResult& r);

}  // namespace infraplan::gui
