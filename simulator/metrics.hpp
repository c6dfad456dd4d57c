#pragma once
// Serving metrics: per-request latencies (TTFT, TPOT, end-to-end, queueing), their percentiles,
// throughput, goodput against SLOs, and time series of KV use, queue lengths, preemptions and
// prefix-cache hits. JSON keys are stable: ttft_ms, tpot_ms, e2e_ms, queue_ms, itl_ms (each
// p50, p90, p95, p99, mean, max), throughput_rps, output_tokens_per_s, goodput_rps.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "simulator/workload.hpp"

namespace infraplan::sim::serve {

/// One finished request.
struct RequestRecord {
  std::int64_t id = 0;
  int klass = 0;                 ///< workload class index
  int instance = 0;              ///< replica (or decode instance under PD)
  double arrival_s = 0;          ///< when it reached the router, seconds
  double first_scheduled_s = 0;  ///< first step that computed it, seconds
  double first_token_s = 0;      ///< first output token, seconds
  double finish_s = 0;           ///< last output token, seconds
  std::int64_t prompt_tokens = 0, output_tokens = 0;
  std::int64_t cached_tokens = 0;  ///< prompt tokens served by the prefix cache
  int preemptions = 0;
  double max_itl_s = 0;  ///< largest gap between two output tokens, seconds
  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return finish_s - arrival_s; }
  double queue_s() const { return first_scheduled_s - arrival_s; }
  /// Mean time per output token after the first, seconds (0 for single-token outputs).
  double tpot_s() const {
    return output_tokens > 1 ? (finish_s - first_token_s) / double(output_tokens - 1) : 0;
  }
};

struct Percentiles {
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, mean = 0, max = 0;
  Json to_json() const;
};
/// Percentiles by linear interpolation between order statistics; values scaled by `scale`.
Percentiles percentiles(std::vector<double> v, double scale = 1.0);

/// The value at probability `f` of ascending `v`: linear interpolation between order statistics
/// (what percentiles() uses). `v` must not be empty.
double quantile_of_sorted(const std::vector<double>& v, double f);

/// Log-bucketed histogram (64 buckets per power of two, ~1% relative resolution) for quantiles of very many
/// samples.
class LogHistogram {
 public:
  void add(double x, std::int64_t count = 1);
  double quantile(double q) const;
  double mean() const { return n_ ? sum_ / double(n_) : 0; }
  double max() const { return max_; }
  std::int64_t count() const { return n_; }
  Percentiles summary(double scale = 1.0) const;

 private:
  std::vector<std::int64_t> buckets_;
  std::int64_t zeros_ = 0, n_ = 0;
  double sum_ = 0, max_ = 0;
};

/// A sample of engine state over time (means over instances).
struct TimePoint {
  double t_s = 0;
  double kv_usage = 0;  ///< fraction of KV blocks in use
  std::int64_t running = 0, waiting = 0;
  std::int64_t preemptions = 0;  ///< cumulative
  double prefix_hit_rate = 0;    ///< cumulative hit tokens / queried prompt tokens
};

struct ServingMetrics {
  std::int64_t requests = 0;
  double duration_s = 0;  ///< first arrival to last token, seconds
  Percentiles ttft_ms, tpot_ms, e2e_ms, queue_ms, itl_ms;
  double throughput_rps = 0, output_tokens_per_s = 0, input_tokens_per_s = 0;
  double goodput_rps = 0, slo_attainment = 0;
  std::int64_t preemptions = 0;
  double prefix_hit_rate = 0;
  double mean_kv_usage = 0, peak_kv_usage = 0;
  double busy_fraction = 0;            ///< time instances spent running steps / (instances × duration)
  double mean_batch_tokens = 0;        ///< tokens computed per step
  double useful_compute_fraction = 1;  ///< computed tokens that were not padding
  std::int64_t steps = 0;
  std::vector<std::string> class_names;
  std::vector<ServingMetrics> per_class;  ///< latency metrics per workload class (when > 1 class)
  std::vector<TimePoint> series;
  Json to_json(bool with_series = true) const;
};

/// Quantile curves of the latency distributions, for CDF plots: the value (ms) at each level.
/// Values at 0.5, 0.9, 0.95 and 0.99 equal the p50/p90/p95/p99 of ServingMetrics exactly (same
/// interpolation, same rounding in JSON).
struct LatencyDistributions {
  std::vector<double> levels;  ///< probabilities, ascending: 0, 0.005, …, 1 and 0.999
  std::vector<double> ttft_ms, tpot_ms, itl_ms, e2e_ms,
      queue_ms;  ///< value at each level, ms (empty: no samples)
  /// {"levels": [...], "ttft_ms": [...], ...}; values rounded to 1e-4 ms like Percentiles.
  Json to_json() const;
};
/// The distributions of `recs` (TPOT over requests with more than one output token, as
/// latency_metrics) and of the inter-token gaps in `itl` (seconds).
LatencyDistributions latency_distributions(const std::vector<RequestRecord>& recs, const LogHistogram& itl);

/// Latency, throughput and goodput over `recs` (SLO zeros mean "no target").
ServingMetrics latency_metrics(const std::vector<RequestRecord>& recs, const Slo& slo);
/// Per-request CSV: one header row, one row per request in id order.
std::string requests_csv(const std::vector<RequestRecord>& recs);

}  // namespace infraplan::sim::serve
