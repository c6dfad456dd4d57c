// infraplan plan train|serve: search layouts, recommend, explain.
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "planner/train_planner.hpp"
#include "simulator/cost_setup.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kTrainSpec = {
    {"scenario", true,
     "take model, cluster, seq_len, global_batch, precision, optimizer and the software (framework, "
     "attention_kernel, flash_attention, host_dispatch, dp_buckets, moe_imbalance) from a scenario"},
    {"model", true, "model preset or JSON/config.json file"},
    {"cluster", true, "cluster preset, PRESET:NODES, GPU name or JSON file"},
    {"seq", true, "sequence length (tokens)"},
    {"global-batch", true, "sequences per iteration"},
    {"tokens", true,
     "tokens to train (e.g. 15e12; default: the scenario's train_tokens, else 20 per parameter)"},
    {"price-per-gpu-hour", true, "USD per GPU-hour for the cost (default: the cluster's price_per_gpu_hour)"},
    {"top", true, "candidates to re-simulate and show (default 5)"},
    {"precision", true, "comma-separated recipes to consider (default bf16-mixed)"},
    {"profile", true, "hardware profile JSON (default: the GPU's embedded profile)"},
    {"roofline", false, "use datasheet peaks instead of a calibrated profile"},
    {"simgrid", false, "re-simulate the best candidates on SimGrid (flow-level network)"},
    {"clock", true,
     "tables (default) or sustained: price layouts at the clock the profile's power law gives them "
     "(docs/training.md)"},
    {"explain", false, "say why the winner wins and why the runner-ups lose"},
    {"json", false, "machine-readable output"},
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int plan_train(const std::vector<std::string>& argv) {
  Args a(argv, kTrainSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan plan train --model M --cluster C --seq S --global-batch B [--tokens T] [--top K]\n"
        "                            [--explain] [--json]\n"
        "       infraplan plan train --scenario F [...]\n\n"
        "Searches tp, pp, dp, cp, ep, sp, ZeRO stage, micro-batch, recompute and pipeline schedule;\n"
        "prunes by validity and memory, ranks by the analytical estimate, re-simulates the best.\n\n%s",
        options_help(kTrainSpec).c_str());
    return 0;
  }
  namespace L = limits;
  a.expect_positional(0, 0, "infraplan plan train --model M --cluster C --seq S --global-batch B [...]");
  plan::TrainPlanRequest r;
  std::string profile = a.get("profile", "");
  std::optional<strat::Scenario> scenario;
  if (a.given("scenario")) {
    a.refuse("model", "cannot be combined with --scenario (the scenario names the model)");
    a.refuse("cluster", "cannot be combined with --scenario (the scenario names the cluster)");
  }
  if (auto f = a.get("scenario")) {
    scenario = strat::load_scenario(*f);
    const auto& sc = *scenario;
    if (sc.training) {
      r = plan::train_plan_request_of(sc);
    } else {
      r.model = sc.model;
      r.cluster = sc.cluster;
      r.seed = sc.seed;
    }
    if (profile.empty()) profile = sc.profile;
  } else {
    r.model = model::resolve_model_arg(a.require("model"));
    r.cluster = hw::resolve_cluster_arg(a.require("cluster"));
  }
  if (auto s = a.get_int("seq", 1, L::kMaxSeqTokens)) r.search.seq_len = *s;
  if (auto b = a.get_int("global-batch", 1, L::kMaxGlobalBatch)) r.search.global_batch = *b;
  if (r.search.global_batch <= 0) throw Error("--global-batch is required (sequences per iteration)");
  if (auto p = a.get("precision")) {
    r.search.precisions.clear();
    for (const auto& name : split(*p, ',')) {
      bool found = false;
      for (auto q : {strat::Precision::BF16Mixed, strat::Precision::FP16Mixed, strat::Precision::AmpBF16,
                     strat::Precision::BF16Pure, strat::Precision::FP8Mixed})
        if (name == strat::precision_name(q)) {
          r.search.precisions.push_back(q);
          found = true;
        }
      if (!found) throw Error(unknown_name_message("precision", name, strat::precision_names()));
      if (name == "fp8-mixed" && !r.cluster.gpu.supports(Dtype::FP8))
        throw Error("--precision fp8-mixed: " + r.cluster.gpu.name + " has no fp8 tensor cores");
    }
  }
  if (auto t = a.get_number("tokens", 0, 1e18)) r.train_tokens = *t;
  if (auto p = a.get_number("price-per-gpu-hour", 0, 1e6)) {
    r.cluster.price_per_gpu_hour = *p;
    r.cluster.price_source = "--price-per-gpu-hour";
  }
  r.top = int(a.get_int("top", 1, L::kMaxTop).value_or(5));
  r.simgrid = a.flag("simgrid");
  const bool tty = isatty(STDERR_FILENO) && !a.flag("json");
  if (tty)
    r.progress = [](std::int64_t visited, std::int64_t) {
      std::fprintf(stderr, "\r  searching... %lld feasible layouts estimated",
                   static_cast<long long>(visited));
    };
  auto cs = sim::make_cost_setup(r.cluster.gpu, profile, a.flag("roofline"));
  {
    const std::string clock = a.get("clock", "tables");
    if (clock != "tables" && clock != "sustained")
      throw Error(unknown_name_message("--clock", clock, {"tables", "sustained"}));
    r.sustained_clock = clock == "sustained";
    if (r.sustained_clock && !cs.cost->power_model())
      throw Error("--clock sustained needs a profile with a power section (infraplan-calibrate --only power); " +
                  cs.name + " has none (the embedded H200 and H100 profiles have one)");
  }
  coll::CommModel comm(r.cluster, cs.comm);
  auto plan = plan::plan_training(r, *cs.cost, comm);
  if (tty) std::fprintf(stderr, "\r%60s\r", "");

  // A derived profile (not measured on this GPU) says so, as simulate train does.
  const std::string caveat = hw::derived_profile_caveat(*cs.cost);
  if (a.flag("json")) {
    Json j = plan_train_json(r, plan, cs.name);
    add_warning(j, caveat);
    if (!plan.candidates.empty() && plan.candidates.front().has_outlook) {
      const auto& best = plan.candidates.front();
      j["goodput"] = best.outlook.goodput.to_json(best.cfg.gpus());
      j["cost"] = best.outlook.cost.to_json();
    }
    stamp_cli_result(j, report::ResultKind::PlanTrain,
                     {command_line("plan train", argv), scenario ? &*scenario : nullptr, cs.provenance});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("plan train: %s on %d × %s (%d nodes), seq %lld, global batch %lld; cost model: %s\n",
              r.model.name.c_str(), r.cluster.total_gpus(), r.cluster.gpu.name.c_str(), r.cluster.nodes,
              static_cast<long long>(r.search.seq_len), static_cast<long long>(r.search.global_batch),
              cs.name.c_str());
  // The software the scenario fixed, when it is not the default.
  if (r.search.software.framework != strat::Framework::Auto ||
      r.search.software.attention_kernel != hw::AttentionKernel::Default)
    std::printf("software: framework %s, attention kernel %s\n",
                r.search.software.framework == strat::Framework::Auto
                    ? "by precision"
                    : strat::framework_name(r.search.software.framework),
                hw::attention_kernel_name(r.search.software.attention_kernel));
  std::printf("searched %lld feasible layouts (%.0f estimates/s), rejected %lld, %.1f s\n\n",
              static_cast<long long>(plan.layouts_visited), plan.estimates_per_second,
              static_cast<long long>(plan.rejected.total()), plan.search_seconds);
  std::vector<std::string> head = {"#",    "tp",       "pp",        "dp",       "cp",       "ep",
                                   "zero", "mb",       "recompute", "schedule", "iter (s)", "tokens/s",
                                   "MFU",  "peak GiB", "bubble",    "exp. comm"};
  head.push_back("days");
  head.push_back("GPU-hours");
  for (const char* h : {"days w/ fail.", "GPU-h w/ fail.", "useful", "ckpt every", "USD"}) head.push_back(h);
  Table t(head);
  int i = 0;
  for (const auto& c : plan.candidates) {
    double T = c.iteration_time_s;
    std::vector<std::string> row = {std::to_string(++i),
                                    std::to_string(c.cfg.tp),
                                    std::to_string(c.cfg.pp),
                                    std::to_string(c.cfg.dp),
                                    std::to_string(c.cfg.cp),
                                    std::to_string(c.cfg.ep),
                                    std::to_string(c.cfg.zero) +
                                        (c.cfg.zero >= 1 && c.cfg.dp_shard < c.cfg.dp
                                             ? " hsdp" + std::to_string(c.cfg.dp_shard)
                                             : ""),
                                    std::to_string(c.cfg.micro_batch),
                                    model::recompute_name(c.cfg.recompute),
                                    std::string(strat::pp_schedule_name(c.cfg.pp_schedule)) +
                                        (c.cfg.pp_schedule == strat::PpSchedule::Interleaved
                                             ? "/" + std::to_string(c.cfg.pp_virtual_stages)
                                             : ""),
                                    fmt(T, 3),
                                    fmt(c.tokens_per_s, 0),
                                    fmt(100 * c.mfu, 1) + "%",
                                    fmt(c.peak_bytes / 1073741824.0, 1),
                                    fmt(100 * c.breakdown.bubble / T, 1) + "%",
                                    fmt(100 * c.breakdown.exposed_comm_total() / T, 1) + "%"};
    const auto& g = c.outlook.goodput;
    row.push_back(fmt(g.compute_s / 86400, 1));
    row.push_back(fmt_count(g.compute_s / 3600 * c.cfg.gpus()));
    row.push_back(fmt(g.expected_wall_s / 86400, 1));
    row.push_back(fmt_count(g.expected_wall_s / 3600 * c.cfg.gpus()));
    row.push_back(fmt(100 * g.useful_fraction, 1) + "%");
    row.push_back(fmt(g.checkpoint_interval_s / 60, 0) + " min");
    row.push_back(fmt_count(c.outlook.cost.usd_total));
    t.add(row);
  }
  std::printf("%s", t.str().c_str());
  std::printf("(iteration times of the listed layouts are re-simulated; %s)\n",
              r.simgrid ? "SimGrid flow-level network" : "discrete-event executor");
  if (!plan.candidates.empty() && plan.candidates.front().has_outlook) {
    const auto& o = plan.candidates.front().outlook;
    std::printf(
        "run of %s tokens (%s); failures: one interruption every %.1f h on %d GPUs (cluster.reliability), "
        "checkpoint %s written in %.0f s, restart %.0f s; price %.2f USD per GPU-hour (%s)\n",
        fmt_count(o.goodput.train_tokens).c_str(), o.goodput.train_tokens_source.c_str(), o.goodput.job_mtbf_s / 3600,
        r.cluster.total_gpus(), fmt_gib(o.goodput.checkpoint_bytes).c_str(), o.goodput.checkpoint_write_s,
        o.goodput.restart_s, o.cost.price_per_gpu_hour, o.cost.price_source.c_str());
  }
  if (!plan.rejected.counts.empty()) {
    std::printf("\nrejected:\n");
    for (const auto& [reason, n] : plan.rejected.counts)
      std::printf("  %8lld  %s\n", static_cast<long long>(n), reason.c_str());
  }
  const auto& best = plan.candidates.front();
  std::printf(
      "\nrecommendation: tp=%d pp=%d dp=%d cp=%d ep=%d sp=%s zero=%d micro_batch=%lld recompute=%s %s\n",
      best.cfg.tp, best.cfg.pp, best.cfg.dp, best.cfg.cp, best.cfg.ep, best.cfg.sp ? "on" : "off",
      best.cfg.zero, static_cast<long long>(best.cfg.micro_batch), model::recompute_name(best.cfg.recompute),
      best.label().substr(best.label().rfind(' ') + 1).c_str());
  if (best.has_outlook) {
    const auto& g = best.outlook.goodput;
    std::printf(
        "checkpoint every %.0f s (%.0f iterations; Young/Daly): %.1f days to train with failures (%.1f without, "
        "%.1f%% useful), %s GPU-hours, %s USD (%.3f USD per million tokens)\n",
        g.checkpoint_interval_s, g.checkpoint_interval_iterations, g.expected_wall_s / 86400, g.compute_s / 86400,
        100 * g.useful_fraction, fmt_count(g.expected_wall_s / 3600 * best.cfg.gpus()).c_str(),
        fmt_count(best.outlook.cost.usd_total).c_str(), best.outlook.cost.usd_per_million_tokens);
  }
  if (a.flag("explain")) {
    std::printf("\nwhy:\n");
    for (const auto& s : plan.explanation) std::printf("  - %s\n", s.c_str());
  }
  if (!caveat.empty()) std::printf("warning: %s\n", caveat.c_str());
  return 0;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::printf(
        "Usage: infraplan plan train ...   best training layout (infraplan plan train --help)\n"
        "       infraplan plan serve ...   best serving deployment (infraplan plan serve --help)\n");
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "train") return plan_train(rest);
  if (args[0] == "serve") return cmd_plan_serve(rest);
  throw Error(unknown_name_message("plan mode", args[0], {"train", "serve"}));
}

}  // namespace infraplan::cli
