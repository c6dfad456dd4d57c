#include "cli/serve_report.hpp"

#include <cstdio>

#include "cli/table.hpp"

namespace infraplan::cli {

namespace {
std::string pct_row(const sim::serve::Percentiles& p) {
  return fmt(p.p50, 1) + " / " + fmt(p.p90, 1) + " / " + fmt(p.p95, 1) + " / " + fmt(p.p99, 1);
}
}  // namespace

void print_serving_report(const strat::Scenario& sc, const sim::serve::ServingSetup& setup,
                          const sim::serve::ServingResult& r, const std::string& timing,
                          const std::string& after_latency) {
  const auto& m = r.metrics;
  const auto& e = setup.engine;
  std::string deploy =
      e.pd.enabled
          ? std::to_string(e.pd.prefill_instances) + " prefill (tp=" + std::to_string(e.pd.prefill_tp) +
                ") + " + std::to_string(e.pd.decode_instances) +
                " decode (tp=" + std::to_string(e.pd.decode_tp) + ")"
          : std::to_string(setup.serving.replicas) + " replica(s) × tp=" + std::to_string(setup.serving.tp);
  std::printf("%s: %s on %s, %s, weights %s, KV %s; %s; seed %llu\n\n", sc.name.c_str(),
              sc.model.name.c_str(), sc.cluster.name.c_str(), deploy.c_str(),
              strat::weight_quant_name(setup.serving.weights),
              std::string(dtype_name(setup.serving.kv_dtype)).c_str(), timing.c_str(),
              (unsigned long long)setup.workload.seed);
  Table t({"latency (ms)", "p50 / p90 / p95 / p99", "mean", "max"});
  t.add({"TTFT", pct_row(m.ttft_ms), fmt(m.ttft_ms.mean, 1), fmt(m.ttft_ms.max, 1)});
  t.add({"TPOT", pct_row(m.tpot_ms), fmt(m.tpot_ms.mean, 2), fmt(m.tpot_ms.max, 2)});
  t.add({"inter-token", pct_row(m.itl_ms), fmt(m.itl_ms.mean, 2), fmt(m.itl_ms.max, 1)});
  t.add({"end-to-end", pct_row(m.e2e_ms), fmt(m.e2e_ms.mean, 1), fmt(m.e2e_ms.max, 1)});
  t.add({"queueing", pct_row(m.queue_ms), fmt(m.queue_ms.mean, 1), fmt(m.queue_ms.max, 1)});
  std::printf("%s%s\n", t.str().c_str(), after_latency.c_str());
  const auto& slo = setup.workload.slo;
  std::printf("requests %lld in %s: %.2f req/s, %.0f output tok/s, %.0f input tok/s\n", (long long)m.requests,
              fmt_seconds(m.duration_s).c_str(), m.throughput_rps, m.output_tokens_per_s,
              m.input_tokens_per_s);
  std::printf("goodput %.2f req/s (%.1f%% meet TTFT ≤ %s ms and TPOT ≤ %s ms)\n", m.goodput_rps,
              100 * m.slo_attainment, slo.ttft_ms > 0 ? fmt(slo.ttft_ms, 0).c_str() : "∞",
              slo.tpot_ms > 0 ? fmt(slo.tpot_ms, 0).c_str() : "∞");
  std::printf(
      "engine: %lld steps, %.0f tokens/step, busy %.1f%%, KV use mean %.1f%% peak %.1f%%, preemptions %lld, "
      "prefix hits %.1f%%\n",
      (long long)m.steps, m.mean_batch_tokens, 100 * m.busy_fraction, 100 * m.mean_kv_usage,
      100 * m.peak_kv_usage, (long long)m.preemptions, 100 * m.prefix_hit_rate);
  if (r.kv_transfers > 0)
    std::printf("KV transfers: %lld over %s, mean %.2f ms (queueing included)\n", (long long)r.kv_transfers,
                r.kv_link.c_str(), r.kv_transfer_ms_mean);
  for (std::size_t i = 0; i < m.per_class.size(); ++i)
    std::printf("  class %-10s %5lld req  TTFT p95 %8.1f ms  TPOT p95 %7.2f ms\n", m.class_names[i].c_str(),
                (long long)m.per_class[i].requests, m.per_class[i].ttft_ms.p95, m.per_class[i].tpot_ms.p95);
}

}  // namespace infraplan::cli
