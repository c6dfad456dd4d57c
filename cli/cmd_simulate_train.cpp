// infraplan simulate train --scenario F [--json] [--trace out.json] [--mode auto|exact|symmetric]
//                          [--gemm-shapes-out shapes.json]
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/gemm_shapes_out.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "collectives/comm_model.hpp"
#include "common/error.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/prediction_range.hpp"
#include "simulator/training_goodput.hpp"
#include "simulator/training_sim.hpp"
#include "simulator/training_trace.hpp"
#include "simulator/validated_interval.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true, "scenario file with a 'training' object (docs/scenario.md)"},
    {"json", false, "machine-readable output"},
    {"trace", true, "write a Chrome/Perfetto trace of the iteration to this file"},
    {"mode", true, "auto (exact up to 64 GPUs), exact (every GPU) or symmetric (one pipeline)"},
    {"simgrid", false, "execute on SimGrid (link contention between concurrent transfers)"},
    {"estimate", false, "closed-form estimate only (no event simulation)"},
    {"roofline", false, "datasheet roofline instead of the GPU's calibrated profile"},
    {"tokens", true, "tokens of the whole run for goodput and cost (default: training.train_tokens, else 20 per "
                     "parameter)"},
    {"price-per-gpu-hour", true, "USD per GPU-hour (default: the cluster's price_per_gpu_hour)"},
    {"clock", true,
     "tables (default: GEMMs at the clock the profile's tables refer to) or sustained (at the clock the profile's "
     "power law gives the step under the board's power limit; profiles with a power section)"},
    GemmShapesOut::option(),
};

}  // namespace

int cmd_simulate_train(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf("Usage: infraplan simulate train --scenario F [--json] [--trace out.json] [--mode M]\n\n%s",
                options_help(kSpec).c_str());
    return 0;
  }
  a.expect_positional(0, 0, "infraplan simulate train --scenario F [--json] [--trace out.json] [--mode M]");
  if (a.flag("estimate")) {
    a.refuse("trace", "cannot be combined with --estimate (the closed-form estimate has no timeline)");
    a.refuse("mode", "cannot be combined with --estimate (no event simulation runs)");
    a.refuse("simgrid", "cannot be combined with --estimate (no event simulation runs)");
  }
  auto sc = strat::load_scenario(a.require("scenario"));
  if (!sc.training) throw Error(sc.origin + ": no 'training' object; add one (docs/scenario.md)");
  if (auto p = a.get_number("price-per-gpu-hour", 0, 1e6)) {
    sc.cluster.price_per_gpu_hour = *p;
    sc.cluster.price_source = "--price-per-gpu-hour";
  }
  const double tokens = a.get_number("tokens", 1, 1e18).value_or(0);
  auto outlook_of = [&](double iteration_s) {
    return sim::train::training_outlook(sc.model, sc.cluster, *sc.training, iteration_s, sc.seed, tokens);
  };
  auto add_outlook = [&](Json& j, const sim::train::RunOutlook& o) {
    j["goodput"] = o.goodput.to_json(sc.cluster.total_gpus());
    j["cost"] = o.cost.to_json();
  };
  auto print_outlook = [&](const sim::train::RunOutlook& o) {
    const auto& g = o.goodput;
    Table w({"whole run", "value"});
    w.add({"train_tokens", fmt_count(g.train_tokens) + " (" + g.train_tokens_source + ")"});
    w.add({"days to train (no failures)", fmt(g.compute_s / 86400, 2)});
    w.add({"interruptions", "one every " + fmt(g.job_mtbf_s / 3600, 2) + " h, " + fmt(g.failures_expected, 0) +
                                " expected"});
    w.add({"checkpoint", fmt_gib(g.checkpoint_bytes) + " (" + fmt_gib(g.checkpoint_bytes_per_gpu) +
                             " per GPU), written in " + fmt(g.checkpoint_write_s, 1) + " s"});
    w.add({"restart", fmt(g.restart_s, 0) + " s (restart + checkpoint read)"});
    w.add({"checkpoint interval (Young/Daly)",
           fmt(g.checkpoint_interval_s, 0) + " s = " + fmt(g.checkpoint_interval_iterations, 0) + " iterations"});
    w.add({"useful fraction", fmt(100 * g.useful_fraction, 2) + "%"});
    w.add({"days to train with failures", fmt(g.expected_wall_s / 86400, 2)});
    w.add({"  Monte Carlo (" + std::to_string(g.monte_carlo.runs) + " runs, seed " +
               std::to_string(g.monte_carlo.seed) + ")",
           fmt(g.monte_carlo.mean_s / 86400, 2) + " days, 95% CI " + fmt(g.monte_carlo.ci95_low_s / 86400, 2) +
               " - " + fmt(g.monte_carlo.ci95_high_s / 86400, 2)});
    w.add({"GPU-hours (no failures / with)", fmt_count(g.compute_s / 3600 * sc.cluster.total_gpus()) + " / " +
                                                 fmt_count(g.expected_wall_s / 3600 * sc.cluster.total_gpus())});
    w.add({"cost (USD, at " + fmt(o.cost.price_per_gpu_hour, 2) + " per GPU-hour)",
           fmt_count(o.cost.usd_total) + ", " + fmt(o.cost.usd_per_million_tokens, 3) + " per million tokens"});
    std::printf("%s", w.str().c_str());
    std::printf("price: %s\n", o.cost.price_source.c_str());
  };
  const auto& t = *sc.training;
  const std::string clock = a.get("clock", "tables");
  if (clock != "tables" && clock != "sustained")
    throw Error(unknown_name_message("--clock", clock, {"tables", "sustained"}));
  const bool sustained = clock == "sustained";
  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, a.flag("roofline"));
  if (sustained && !cs.cost->power_model())
    throw Error("--clock sustained needs a profile with a power section (infraplan-calibrate --only power); " +
                cs.name + " has none (the embedded H200 and H100 profiles have one)");
  const std::string& cost_name = cs.name;
  coll::CommModel comm(sc.cluster, cs.comm);
  const GemmShapesOut shapes(a, *cs.cost);

  const hw::CostModel& cost = shapes.cost();
  // Every output is checked before the run and written after it: an error leaves none written.
  OutputFiles out;
  for (const auto& in : sc.input_files) out.add_input(in);
  const auto trace = a.get("trace");
  if (trace) out.add("--trace", *trace);
  shapes.declare(out);

  if (a.flag("estimate")) {
    auto e = sim::train::estimate_training(sc.model, sc.cluster, t, cost, comm, nullptr, sustained);
    const auto range =
        sim::estimate_time_range(sc.model, sc.cluster, t, *cs.cost, comm, cs.spread, sustained);
    shapes.stage(out);
    out.commit();
    // A derived profile (not measured on this GPU) says so, as the simulation's warnings do.
    const std::string caveat = hw::derived_profile_caveat(*cs.cost);
    if (a.flag("json")) {
      Json j = estimate_train_json(sc, e, cost_name);
      add_warning(j, caveat);
      if (range) j["iteration_time_range_s"] = *range, j["uncertainty"] = cs.spread.method;
      add_outlook(j, outlook_of(e.iteration_time_s));
      stamp_cli_result(j, report::ResultKind::SimulateTrainEstimate,
                       {command_line("simulate train", argv), &sc, cs.provenance});
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf(
          "%s (estimate): iteration %s%s, %.0f tokens/s, MFU %.1f%%, peak %s\n\n", sc.name.c_str(),
          fmt_seconds(e.iteration_time_s).c_str(),
          range ? (" (" + fmt_seconds((*range)[0]) + " … " + fmt_seconds((*range)[1]) + ")").c_str() : "",
          e.tokens_per_s, 100 * e.mfu, fmt_gib(e.peak_bytes).c_str());
      if (e.clock) std::printf("SM clock: %s\n\n", e.clock->summary().c_str());
      print_outlook(outlook_of(e.iteration_time_s));
      if (!caveat.empty()) std::printf("warning: %s\n", caveat.c_str());
    }
    return 0;
  }
  sim::train::TrainingOptions o;
  const std::string mode = a.get("mode", "auto");
  if (mode == "exact")
    o.mode = sim::train::Mode::Exact;
  else if (mode == "symmetric")
    o.mode = sim::train::Mode::Symmetric;
  else if (mode != "auto")
    throw Error(unknown_name_message("--mode", mode, {"auto", "exact", "symmetric"}));
  if (a.flag("simgrid")) o.backend = sim::train::Backend::SimGrid;
  o.sustained_clock = sustained;
  o.keep_graph = trace.has_value();
  auto r = sim::train::simulate_training(sc.model, sc.cluster, t, cost, comm, o);
  const auto range = sim::training_time_range(sc.model, sc.cluster, t, *cs.cost, comm, cs.spread, o);
  const auto interval = sim::training_interval(cs, r.iteration_time_s, sustained);
  if (trace) out.set(*trace, sim::train::training_trace_json(r, sc.cluster));
  shapes.stage(out);
  out.commit();
  if (a.flag("json")) {
    Json j = simulate_train_json(sc, r, cost_name);
    if (range) j["iteration_time_range_s"] = *range, j["uncertainty"] = cs.spread.method;
    if (interval)
      j["iteration_time_interval_s"] = {interval->seconds.first, interval->seconds.second},
      j["interval"] = interval->note;
    add_outlook(j, outlook_of(r.iteration_time_s));
    stamp_cli_result(j, report::ResultKind::SimulateTrain,
                     {command_line("simulate train", argv), &sc, cs.provenance});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf(
      "%s: %s on %s (%d GPUs), tp=%d pp=%d dp=%d cp=%d ep=%d zero=%d sp=%s, %s, %s, recompute %s, framework "
      "%s\n",
      sc.name.c_str(), sc.model.name.c_str(), sc.cluster.name.c_str(), sc.cluster.total_gpus(), t.tp, t.pp,
      t.dp, t.cp, t.ep, t.zero, t.sp ? "on" : "off", strat::pp_schedule_name(t.pp_schedule),
      strat::precision_name(t.precision),
      (std::string(model::recompute_name(t.recompute)) +
       (strat::partial_recompute(t)
            ? " (first " + std::to_string(t.recompute_layers) + " layers of each chunk)"
            : ""))
          .c_str(),
      strat::framework_name(strat::framework_of(t)));
  std::printf(
      "global batch %lld × %lld tokens, %lld micro-batches of %lld; cost model: %s; %s mode (%zu lanes, %zu "
      "ops)\n\n",
      (long long)t.global_batch, (long long)t.seq_len, (long long)t.micro_batches(), (long long)t.micro_batch,
      cost_name.c_str(), (r.mode + ", " + r.backend).c_str(), r.lanes, r.ops);
  Table s({"metric", "value"});
  s.add({"iteration_time_s", fmt(r.iteration_time_s, 4)});
  if (range) s.add({"iteration_time_range_s", fmt((*range)[0], 4) + " … " + fmt((*range)[1], 4)});
  if (interval)
    s.add({"iteration_time_interval_s (80%)",
           fmt(interval->seconds.first, 4) + " … " + fmt(interval->seconds.second, 4)});
  s.add({"tokens/s", fmt(r.tokens_per_s, 0)});
  s.add({"MFU", fmt(100 * r.mfu, 1) + "%"});
  s.add({"HFU", fmt(100 * r.hfu, 1) + "%"});
  s.add({"peak_bytes (per GPU)", fmt_gib(r.peak_bytes) + " of " + fmt_gib(r.ledger.capacity_bytes)});
  if (r.clock) s.add({"SM clock", r.clock->summary()});
  std::printf("%s", s.str().c_str());
  if (range)
    std::printf("(range: %s; communication%s unbanded)\n", sim::spread_summary(cs.spread).c_str(),
                cs.spread.host ? "" : " and host dispatch");
  if (interval) std::printf("(interval: %s)\n", interval->note.c_str());
  std::printf("\n");
  Table b({"time (stage " + std::to_string(r.reported_stage) + ")", "seconds", "share"});
  const double T = r.iteration_time_s;
  auto row = [&](const std::string& n, double v) { b.add({n, fmt_seconds(v), fmt(100 * v / T, 1) + "%"}); };
  row("compute", r.breakdown.compute);
  row("recompute", r.breakdown.recompute);
  row("optimizer", r.breakdown.optimizer);
  for (const auto& [k, v] : r.breakdown.exposed_comm) row("exposed comm " + k, v);
  row("bubble", r.breakdown.bubble);
  std::printf("%s\n", b.str().c_str());
  Table c({"critical path", "seconds", "ops"});
  std::map<std::string, std::pair<double, int>> agg;
  for (const auto& seg : r.critical_path)
    agg[seg.category].first += seg.seconds, agg[seg.category].second += seg.ops;
  for (const auto& [k, v] : agg) c.add({k, fmt_seconds(v.first), std::to_string(v.second)});
  std::printf("%s\n", c.str().c_str());
  print_outlook(outlook_of(r.iteration_time_s));
  std::printf("\nmemory (%s): %s\n", r.ledger.scope.c_str(), r.ledger.verdict().c_str());
  for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
  if (trace) std::printf("trace written to %s\n", trace->c_str());
  return 0;
}

}  // namespace infraplan::cli
