// infraplan plan serve: the best serving deployment for a rate (or a GPU budget) under SLOs.
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "hardware/derived_profile_caveat.hpp"
#include "hardware/reliability.hpp"
#include "planner/serve_planner.hpp"
#include "simulator/cost_setup.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"model", true, "model preset or JSON/config.json file"},
    {"gpu", true, "GPU catalog name (infraplan hardware)"},
    {"gpus", true, "GPU budget: maximise goodput on this many GPUs"},
    {"rate", true, "target request rate (requests/s): find the fewest GPUs that meet it"},
    {"isl", true, "mean prompt tokens (log-normal, sigma 0.5)"},
    {"osl", true, "mean output tokens (log-normal, sigma 0.5)"},
    {"workload", true, "workload JSON (a scenario or a workload object) instead of --isl/--osl"},
    {"ttft-ms", true, "TTFT SLO, milliseconds"},
    {"tpot-ms", true, "TPOT SLO, milliseconds"},
    {"attainment", true, "share of requests that must meet both SLOs (default 0.9)"},
    {"quant", true, "comma-separated weight formats to consider (bf16,fp8,int8,int4,nvfp4; default bf16)"},
    {"tp", true, "comma-separated TP sizes to consider (default: powers of two up to a node)"},
    {"draft", true, "draft model for speculative decoding (preset or file)"},
    {"acceptance", true, "draft token acceptance rate (default 0.7)"},
    {"no-disaggregation", false, "search aggregated deployments only"},
    {"probe-requests", true, "requests per capacity probe (default 300)"},
    {"seed", true, "workload seed (default 1)"},
    {"price-per-gpu-hour", true, "USD per GPU-hour for the cost columns (default: the GPU's indicative rate)"},
    {"profile", true, "hardware profile JSON (default: the GPU's embedded profile)"},
    {"roofline", false, "use datasheet peaks instead of a calibrated profile"},
    {"json", false, "machine-readable output"},
};

}  // namespace

int cmd_plan_serve(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan plan serve --model M --gpu G (--gpus N | --rate R) (--isl I --osl O | --workload "
        "F)\n"
        "                            --ttft-ms X --tpot-ms Y [--quant ...] [--draft M] [--json]\n\n"
        "Searches aggregated vs prefill/decode-disaggregated deployments, TP per instance, pool ratio,\n"
        "token budgets, quantization and speculative decoding; every candidate is judged by simulated\n"
        "goodput (the serving mini-engine), sized for the target and verified by one more simulation.\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  namespace L = limits;
  a.expect_positional(0, 0, "infraplan plan serve --model M --gpu G (--gpus N | --rate R) ...");
  plan::ServeSearch s;
  s.model = model::resolve_model_arg(a.require("model"));
  s.gpu = hw::find_gpu(a.require("gpu"));
  if (auto g = a.get_int("gpus", 1, L::kMaxGpus)) s.gpus = int(*g);
  if (auto r = a.get_number("rate", 0, L::kMaxRatePerSecond)) s.target_rate = *r;
  if ((s.gpus > 0) == (s.target_rate > 0)) throw Error("give exactly one of --gpus N or --rate R (> 0)");
  const std::uint64_t seed = std::uint64_t(a.get_int("seed", 0, kInt64Max).value_or(1));
  if (a.given("workload")) {
    a.refuse("isl", "cannot be combined with --workload (the workload file gives the prompt lengths)");
    a.refuse("osl", "cannot be combined with --workload (the workload file gives the output lengths)");
  }
  if (!a.given("draft")) a.refuse("acceptance", "needs --draft (the acceptance rate of a draft model)");
  if (auto w = a.get("workload")) {
    Json j = read_json_file(*w);
    if (j.contains("workload")) j = j.at("workload");
    s.workload = sim::serve::workload_from_json(j, seed);
  } else {
    auto isl = a.get_int("isl", 1, L::kMaxSeqTokens / 4), osl = a.get_int("osl", 1, L::kMaxSeqTokens / 4);
    if (!isl || !osl) throw Error("give --isl and --osl (mean prompt and output tokens) or --workload F");
    s.workload = sim::serve::workload_from_json(
        Json{{"requests", 300},
             {"arrival", {{"type", "poisson"}, {"rate_per_s", 1}}},
             {"prompt_tokens", {{"dist", "lognormal"}, {"mean", *isl}, {"sigma", 0.5}, {"max", 4 * *isl}}},
             {"output_tokens", {{"dist", "lognormal"}, {"mean", *osl}, {"sigma", 0.5}, {"max", 4 * *osl}}}},
        seed);
  }
  s.workload.slo.ttft_ms = a.get_number("ttft-ms", 1e-9, L::kMaxSloMs).value_or(0);
  s.workload.slo.tpot_ms = a.get_number("tpot-ms", 1e-9, L::kMaxSloMs).value_or(0);
  if (s.workload.slo.ttft_ms <= 0 || s.workload.slo.tpot_ms <= 0)
    throw Error("--ttft-ms and --tpot-ms are required");
  if (auto at = a.get_number("attainment", 0, 1)) {
    if (*at <= 0) throw Error("--attainment=0 is invalid: must be in (0, 1]");
    s.attainment = *at;
  }
  if (auto q = a.get("quant")) {
    s.quants.clear();
    for (const auto& name : split_commas(*q)) {
      auto w = strat::parse_weight_quant(name, "--quant");
      strat::ServingConfig probe;
      probe.weights = w;
      strat::validate_serving(probe, s.model, s.gpu);  // fp8 on A100, nvfp4 before Blackwell: refused here
      s.quants.push_back(w);
    }
  }
  if (auto t = a.get("tp")) {
    for (const auto& x : split_commas(*t)) {
      const int v = int(parse_integer(x, "--tp", 1, L::kMaxGpus));
      if (s.model.heads % v != 0)
        throw Error("--tp=" + x + " does not divide heads=" + std::to_string(s.model.heads));
      s.tps.push_back(v);
    }
  }
  if (auto d = a.get("draft")) s.draft = model::resolve_model_arg(*d);
  if (auto acc = a.get_number("acceptance", 0, 1)) {
    if (*acc >= 1) throw Error("--acceptance=" + number_text(*acc) + " is invalid: must be in [0, 1)");
    s.draft_acceptance = *acc;
  }
  s.disaggregation = !a.flag("no-disaggregation");
  s.price_per_gpu_hour = hw::default_price_per_gpu_hour(s.gpu.name, &s.price_source);
  if (auto p = a.get_number("price-per-gpu-hour", 0, 1e6)) {
    s.price_per_gpu_hour = *p;
    s.price_source = "--price-per-gpu-hour";
  }
  if (auto p = a.get_int("probe-requests", 20, 100000)) s.probe_requests = int(*p);
  const bool tty = isatty(STDERR_FILENO) && !a.flag("json");
  if (tty)
    s.progress = [](const std::string& m) { std::fprintf(stderr, "\r  simulating %-60.60s", m.c_str()); };
  auto cs = sim::make_cost_setup(s.gpu, a.get("profile", ""), a.flag("roofline"));
  auto plan = plan::plan_serving(s, *cs.cost);
  if (tty) std::fprintf(stderr, "\r%80s\r", "");

  // A derived profile (not measured on this GPU) says so, as simulate serve does.
  const std::string caveat = hw::derived_profile_caveat(*cs.cost, hw::CaveatFor::Serving);
  if (a.flag("json")) {
    Json j = plan_serve_json(s, plan, cs.name);
    add_warning(j, caveat);
    j["price_per_gpu_hour"] = s.price_per_gpu_hour;
    j["price_source"] = s.price_source;
    stamp_cli_result(j, report::ResultKind::PlanServe,
                     {command_line("plan serve", argv), nullptr, cs.provenance});
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  const auto& k = s.workload.classes.at(0);
  std::printf(
      "plan serve: %s on %s, %s, prompt ~%.0f / output ~%.0f tokens, SLO TTFT %.0f ms & TPOT %.0f ms for "
      "%.0f%% of requests\n",
      s.model.name.c_str(), s.gpu.name.c_str(),
      s.target_rate > 0 ? ("target " + fmt(s.target_rate, 2) + " requests/s").c_str()
                        : (std::to_string(s.gpus) + " GPUs").c_str(),
      k.prompt.mean, k.output.mean, s.workload.slo.ttft_ms, s.workload.slo.tpot_ms, 100 * s.attainment);
  std::printf("cost model: %s; %lld simulations in %.1f s; price %.2f USD per GPU-hour (%s)\n\n", cs.name.c_str(),
              static_cast<long long>(plan.simulations), plan.search_seconds, s.price_per_gpu_hour,
              s.price_source.c_str());
  Table t({"#", "deployment", "GPUs", "P:D GPUs", "cap/inst (req/s)", "goodput (req/s)", "per GPU",
           "TTFT p90", "TPOT p90", "tok/s/user", "KV tokens/inst", "meets", "USD/h", "USD/M out tok",
           "USD/req"});
  int i = 0;
  for (const auto& c : plan.candidates) {
    t.add(
        {std::to_string(++i), c.label(), std::to_string(c.gpus),
         c.mode == "aggregated" ? "-" : std::to_string(c.prefill_gpus) + ":" + std::to_string(c.decode_gpus),
         c.mode == "aggregated" ? fmt(c.capacity_rps, 2)
                                : fmt(c.capacity_rps, 2) + " / " + fmt(c.decode_capacity_rps, 2),
         fmt(c.goodput_rps, 2), fmt(c.goodput_rps_per_gpu, 3), fmt(c.ttft_p90_ms, 0) + " ms",
         fmt(c.tpot_p90_ms, 1) + " ms", fmt(c.tokens_per_s_per_user, 1),
         fmt_count(double(c.kv_capacity_tokens)), c.meets_target ? "yes" : "no", fmt(c.usd_per_hour, 2),
         fmt(c.usd_per_million_output_tokens, 3), fmt(c.usd_per_request, 5)});
  }
  std::printf("%s", t.str().c_str());
  if (!plan.pareto.empty()) {
    Table p({"output tok/s per GPU", "tok/s per user", "load (req/s)", "deployment"});
    for (std::size_t j = 0; j < plan.pareto.size(); ++j)
      p.add({fmt(plan.pareto[j].output_tokens_per_s_per_gpu, 0), fmt(plan.pareto[j].tokens_per_s_per_user, 1),
             fmt(plan.pareto[j].rate_rps, 2), plan.pareto_labels[j]});
    std::printf("\nPareto front (throughput per GPU vs speed per user):\n%s", p.str().c_str());
  }
  std::printf("\n");
  for (const auto& line : plan.explanation) std::printf("- %s\n", line.c_str());
  if (!caveat.empty()) std::printf("warning: %s\n", caveat.c_str());
  return plan.candidates.empty() || !plan.candidates.front().meets_target ? 1 : 0;
}

}  // namespace infraplan::cli
