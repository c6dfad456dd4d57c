// infraplan simulate serve --scenario F [--json] [--trace out.json] [--requests out.csv]
//                          [--gemm-shapes-out shapes.json]
#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/gemm_shapes_out.hpp"
#include "cli/results.hpp"
#include "cli/serve_report.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/prediction_range.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/validated_interval.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true, "scenario file with 'serving' and 'workload' objects (docs/serving.md)"},
    {"json", false, "machine-readable output (config, metrics, time series, instances)"},
    {"trace", true, "write a Chrome/Perfetto trace of engine steps and KV transfers to this file"},
    {"requests", true, "write one CSV row per request (latencies, cache hits, preemptions) to this file"},
    {"seed", true, "override the workload seed"},
    {"clock", true,
     "sustained (default where the profile has a power law: each step at the clocks the board's power limiter gives it, "
     "docs/serving.md) or tables (every step at the clock the GEMM tables refer to)"},
    {"roofline", false, "datasheet roofline instead of the GPU's calibrated profile"},
    GemmShapesOut::option(),
};

}  // namespace

bool serving_power_limited(const Args& a, const hw::CostModel& cost) {
  const bool law = cost.has_power_limiter();
  const auto clock = a.get("clock");
  if (!clock) return law;
  if (*clock != "tables" && *clock != "sustained")
    throw Error(unknown_name_message("--clock", *clock, {"tables", "sustained"}));
  if (*clock == "sustained" && !law)
    throw Error("--clock sustained needs a profile with a power section whose mixtures give the limiter's time constant "
                "(infraplan-calibrate --only power); this cost model has none");
  return *clock == "sustained";
}

int cmd_simulate_serve(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan simulate serve --scenario F [--json] [--trace out.json] [--requests out.csv]\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  a.expect_positional(0, 0, "infraplan simulate serve --scenario F [--json] [--trace out.json] [--requests out.csv]");
  auto sc = strat::load_scenario(a.require("scenario"));
  auto setup = sim::serve::serving_setup_from_scenario(sc);
  if (auto s = a.get_int("seed", 0, kInt64Max)) setup.workload.seed = std::uint64_t(*s);
  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, a.flag("roofline"));
  const std::string& cost_name = cs.name;
  const GemmShapesOut shapes(a, *cs.cost);
  sim::ChromeTrace trace;
  sim::serve::SimOptions o;
  const auto trace_path = a.get("trace");
  const auto csv_path = a.get("requests");
  // Every output is checked before the run and written after it: an error leaves none written.
  OutputFiles out;
  for (const auto& in : sc.input_files) out.add_input(in);
  if (trace_path) out.add("--trace", *trace_path);
  if (csv_path) out.add("--requests", *csv_path);
  shapes.declare(out);
  if (trace_path) o.trace = &trace;
  o.keep_requests = true;
  o.power_limited = serving_power_limited(a, *cs.cost);
  auto r = sim::serve::simulate_serving(setup, shapes.cost(), o);
  const auto range = sim::serving_range(setup, *cs.cost, cs.spread);
  // The 80% interval from the profile's validation runs (the infraplan engine, limiter as by default).
  const auto interval = sim::serving_interval(cs, setup, r.metrics, o.power_limited);
  // Everything is computed before anything is written: an error leaves no partial output.
  if (trace_path) out.set(*trace_path, trace.str());
  if (csv_path) out.set(*csv_path, sim::serve::requests_csv(r.requests));
  shapes.stage(out);
  out.commit();

  // A derived profile (not measured on this GPU) says so, with what published rows found.
  const std::string caveat = hw::derived_profile_caveat(*cs.cost, hw::CaveatFor::Serving);
  if (a.flag("json")) {
    Json j = simulate_serve_json(sc, r, cost_name);
    add_warning(j, caveat);
    if (range) {
      const Json rj = range->to_json();
      for (auto it = rj.begin(); it != rj.end(); ++it) j["metrics"][it.key()] = it.value();
      j["uncertainty"] = cs.spread.method;
    }
    if (interval) {
      for (auto it = interval->metrics.begin(); it != interval->metrics.end(); ++it)
        j["metrics"][it.key()] = it.value();
      j["interval"] = interval->note;
    }
    stamp_cli_result(j, report::ResultKind::SimulateServe,
                     {command_line("simulate serve", argv), &sc, cs.provenance});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::string range_text;  // the prediction's range, printed under the latency table
  if (range) {
    auto span = [](const sim::serve::Percentiles& lo, const sim::serve::Percentiles& hi, int digits) {
      return fmt(std::min(lo.p50, hi.p50), digits) + " … " + fmt(std::max(lo.p50, hi.p50), digits) + " / " +
             fmt(std::min(lo.p99, hi.p99), digits) + " … " + fmt(std::max(lo.p99, hi.p99), digits);
    };
    Table rt({"range (ms)", "p50 low … high / p99 low … high"});
    rt.add({"TTFT", span(range->low.ttft_ms, range->high.ttft_ms, 1)});
    rt.add({"TPOT", span(range->low.tpot_ms, range->high.tpot_ms, 2)});
    rt.add({"end-to-end", span(range->low.e2e_ms, range->high.e2e_ms, 1)});
    range_text = rt.str() + "(" + sim::spread_summary(cs.spread) + "; communication and host unbanded)\n";
  }
  if (interval) {
    Table it({"80% interval (ms)", "p50 low … high"});
    if (interval->ttft_ms)
      it.add({"TTFT", fmt(interval->ttft_ms->first, 1) + " … " + fmt(interval->ttft_ms->second, 1)});
    if (interval->tpot_ms)
      it.add({"TPOT", fmt(interval->tpot_ms->first, 2) + " … " + fmt(interval->tpot_ms->second, 2)});
    range_text += it.str() + "(" + interval->note + ")\n";
  }
  print_serving_report(sc, setup, r, "cost model: " + cost_name, range_text);
  if (!caveat.empty()) std::printf("warning: %s\n", caveat.c_str());
  if (trace_path) std::printf("trace: %s (%zu events)\n", trace_path->c_str(), trace.size());
  if (csv_path) std::printf("requests: %s\n", csv_path->c_str());
  return 0;
}

}  // namespace infraplan::cli
