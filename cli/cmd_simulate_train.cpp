// infraplan simulate train --scenario F [--json] [--trace out.json] [--mode auto|exact|symmetric]
//                          [--gemm-shapes-out shapes.json]
#include <cstdio>
#include <memory>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/gemm_shapes_out.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "collectives/comm_model.hpp"
#include "hardware/calibrated_cost_model.hpp"
#include "hardware/profile.hpp"
#include "hardware/roofline_cost_model.hpp"
#include "model/error.hpp"
#include "simulator/cost_setup.hpp"
#include "simulator/training_sim.hpp"
#include "simulator/training_trace.hpp"
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
  auto sc = strat::load_scenario(a.require("scenario"));
  if (!sc.training) throw Error(sc.origin + ": no 'training' object; add one (docs/scenario.md)");
  const auto& t = *sc.training;
  auto cs = sim::make_cost_setup(sc.cluster.gpu, sc.profile, a.flag("roofline"));
  const std::string& cost_name = cs.name;
  coll::CommModel comm(sc.cluster, cs.comm);
  const GemmShapesOut shapes(a, *cs.cost);
  const hw::CostModel& cost = shapes.cost();

  if (a.flag("estimate")) {
    auto e = sim::train::estimate_training(sc.model, sc.cluster, t, cost, comm);
    shapes.write();
    if (a.flag("json")) {
      Json j = estimate_train_json(sc, e, cost_name);
      stamp_cli_result(j, report::ResultKind::SimulateTrainEstimate,
                       {command_line("simulate train", argv), &sc, cs.provenance});
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%s (estimate): iteration %s, %.0f tokens/s, MFU %.1f%%, peak %s\n", sc.name.c_str(),
                  fmt_seconds(e.iteration_time_s).c_str(), e.tokens_per_s, 100 * e.mfu,
                  fmt_gib(e.peak_bytes).c_str());
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
  const auto trace = a.get("trace");
  o.keep_graph = trace.has_value();
  auto r = sim::train::simulate_training(sc.model, sc.cluster, t, cost, comm, o);
  if (trace) write_file_atomic(*trace, sim::train::training_trace_json(r, sc.cluster));
  shapes.write();
  if (a.flag("json")) {
    Json j = simulate_train_json(sc, r, cost_name);
    stamp_cli_result(j, report::ResultKind::SimulateTrain,
                     {command_line("simulate train", argv), &sc, cs.provenance});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: %s on %s (%d GPUs), tp=%d pp=%d dp=%d cp=%d ep=%d zero=%d sp=%s, %s, %s, recompute %s, framework %s\n",
              sc.name.c_str(), sc.model.name.c_str(), sc.cluster.name.c_str(), sc.cluster.total_gpus(), t.tp,
              t.pp, t.dp, t.cp, t.ep, t.zero, t.sp ? "on" : "off", strat::pp_schedule_name(t.pp_schedule),
              strat::precision_name(t.precision), model::recompute_name(t.recompute),
              strat::framework_name(strat::framework_of(t)));
  std::printf(
      "global batch %lld × %lld tokens, %lld micro-batches of %lld; cost model: %s; %s mode (%zu lanes, %zu "
      "ops)\n\n",
      (long long)t.global_batch, (long long)t.seq_len, (long long)t.micro_batches(), (long long)t.micro_batch,
      cost_name.c_str(), (r.mode + ", " + r.backend).c_str(), r.lanes, r.ops);
  Table s({"metric", "value"});
  s.add({"iteration_time_s", fmt(r.iteration_time_s, 4)});
  s.add({"tokens/s", fmt(r.tokens_per_s, 0)});
  s.add({"MFU", fmt(100 * r.mfu, 1) + "%"});
  s.add({"HFU", fmt(100 * r.hfu, 1) + "%"});
  s.add({"peak_bytes (per GPU)", fmt_gib(r.peak_bytes) + " of " + fmt_gib(r.ledger.capacity_bytes)});
  std::printf("%s\n", s.str().c_str());
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
  std::printf("memory (%s): %s\n", r.ledger.scope.c_str(), r.ledger.verdict().c_str());
  for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
  if (trace) std::printf("trace written to %s\n", trace->c_str());
  return 0;
}

}  // namespace infraplan::cli
