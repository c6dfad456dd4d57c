// infraplan simulate serve --scenario F [--json] [--trace out.json] [--requests out.csv]
//                          [--gemm-shapes-out shapes.json]
#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/gemm_shapes_out.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "model/error.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/prediction_range.hpp"
#include "simulator/serving_sim.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true, "scenario file with 'serving' and 'workload' objects (docs/serving.md)"},
    {"json", false, "machine-readable output (config, metrics, time series, instances)"},
    {"trace", true, "write a Chrome/Perfetto trace of engine steps and KV transfers to this file"},
    {"requests", true, "write one CSV row per request (latencies, cache hits, preemptions) to this file"},
    {"seed", true, "override the workload seed"},
    {"roofline", false, "datasheet roofline instead of the GPU's calibrated profile"},
    GemmShapesOut::option(),
};

std::string pct_row(const sim::serve::Percentiles& p) {
  return fmt(p.p50, 1) + " / " + fmt(p.p90, 1) + " / " + fmt(p.p95, 1) + " / " + fmt(p.p99, 1);
}

}  // namespace

int cmd_simulate_serve(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan simulate serve --scenario F [--json] [--trace out.json] [--requests out.csv]\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  auto sc = strat::load_scenario(a.require("scenario"));
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  if (auto s = a.get_int("seed", 0)) setup.workload.seed = std::uint64_t(*s);
  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, a.flag("roofline"));
  const std::string& cost_name = cs.name;
  const GemmShapesOut shapes(a, *cs.cost);
  sim::ChromeTrace trace;
  sim::serve::SimOptions o;
  const auto trace_path = a.get("trace");
  const auto csv_path = a.get("requests");
  if (trace_path) o.trace = &trace;
  o.keep_requests = true;
  auto r = sim::serve::simulate_serving(setup, shapes.cost(), o);
  const auto range = sim::serving_range(setup, *cs.cost, cs.spread);
  // Everything is computed before anything is written: an error leaves no partial output.
  if (trace_path) write_file_atomic(*trace_path, trace.str());
  if (csv_path) write_file_atomic(*csv_path, sim::serve::requests_csv(r.requests));
  shapes.write();

  if (a.flag("json")) {
    Json j = simulate_serve_json(sc, r, cost_name);
    if (range) {
      const Json rj = range->to_json();
      for (auto it = rj.begin(); it != rj.end(); ++it) j["metrics"][it.key()] = it.value();
      j["uncertainty"] = cs.spread.method;
    }
    stamp_cli_result(j, report::ResultKind::SimulateServe,
                     {command_line("simulate serve", argv), &sc, cs.provenance});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  const auto& m = r.metrics;
  const auto& e = setup.engine;
  std::string deploy =
      e.pd.enabled
          ? std::to_string(e.pd.prefill_instances) + " prefill (tp=" + std::to_string(e.pd.prefill_tp) +
                ") + " + std::to_string(e.pd.decode_instances) +
                " decode (tp=" + std::to_string(e.pd.decode_tp) + ")"
          : std::to_string(setup.serving.replicas) + " replica(s) × tp=" + std::to_string(setup.serving.tp);
  std::printf("%s: %s on %s, %s, weights %s, KV %s; cost model: %s; seed %llu\n\n", sc.name.c_str(),
              sc.model.name.c_str(), sc.cluster.name.c_str(), deploy.c_str(),
              strat::weight_quant_name(setup.serving.weights),
              std::string(dtype_name(setup.serving.kv_dtype)).c_str(), cost_name.c_str(),
              (unsigned long long)setup.workload.seed);
  Table t({"latency (ms)", "p50 / p90 / p95 / p99", "mean", "max"});
  t.add({"TTFT", pct_row(m.ttft_ms), fmt(m.ttft_ms.mean, 1), fmt(m.ttft_ms.max, 1)});
  t.add({"TPOT", pct_row(m.tpot_ms), fmt(m.tpot_ms.mean, 2), fmt(m.tpot_ms.max, 2)});
  t.add({"inter-token", pct_row(m.itl_ms), fmt(m.itl_ms.mean, 2), fmt(m.itl_ms.max, 1)});
  t.add({"end-to-end", pct_row(m.e2e_ms), fmt(m.e2e_ms.mean, 1), fmt(m.e2e_ms.max, 1)});
  t.add({"queueing", pct_row(m.queue_ms), fmt(m.queue_ms.mean, 1), fmt(m.queue_ms.max, 1)});
  std::printf("%s", t.str().c_str());
  if (range) {
    auto span = [](const sim::serve::Percentiles& lo, const sim::serve::Percentiles& hi, int digits) {
      return fmt(std::min(lo.p50, hi.p50), digits) + " … " + fmt(std::max(lo.p50, hi.p50), digits) + " / " +
             fmt(std::min(lo.p99, hi.p99), digits) + " … " + fmt(std::max(lo.p99, hi.p99), digits);
    };
    Table rt({"range (ms)", "p50 low … high / p99 low … high"});
    rt.add({"TTFT", span(range->low.ttft_ms, range->high.ttft_ms, 1)});
    rt.add({"TPOT", span(range->low.tpot_ms, range->high.tpot_ms, 2)});
    rt.add({"end-to-end", span(range->low.e2e_ms, range->high.e2e_ms, 1)});
    std::printf("%s(%s; communication and host unbanded)\n", rt.str().c_str(),
                sim::spread_summary(cs.spread).c_str());
  }
  std::printf("\n");
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
  if (trace_path) std::printf("trace: %s (%zu events)\n", trace_path->c_str(), trace.size());
  if (csv_path) std::printf("requests: %s\n", csv_path->c_str());
  return 0;
}

}  // namespace infraplan::cli
