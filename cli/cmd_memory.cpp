// infraplan memory train|serve --scenario F [...]
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "common/limits.hpp"
#include "common/error.hpp"
#include "simulator/serving_sim.hpp"
#include "simulator/workload.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true, "scenario file (docs/scenario.md)"},
    {"batch", true,
     "serve: sequences held at once (default: as many of --context tokens as the KV pool holds, at most "
     "serving.max_num_seqs)"},
    {"context", true,
     "serve: tokens per sequence, prompt + output (default: the workload's longest request)"},
    {"stage", true, "train: pipeline stage to show (default: the stage with the largest total)"},
    {"json", false, "machine-readable output"},
};

void print_ledger(const strat::MemoryLedger& L, const std::string& verdict = "") {
  Table t({"line", "GiB", "share", "how"});
  double total = L.total_bytes();
  for (const auto& l : L.lines)
    t.add({l.name, fmt(l.bytes / 1073741824.0, 2), fmt(total > 0 ? 100 * l.bytes / total : 0, 1) + "%",
           l.note});
  t.add({"total", fmt(total / 1073741824.0, 2), "", ""});
  t.add({"capacity", fmt(L.capacity_bytes / 1073741824.0, 2), "", ""});
  std::printf("%s\n%s\n=> %s\n", L.scope.c_str(), t.str().c_str(),
              verdict.empty() ? L.verdict().c_str() : verdict.c_str());
}

}  // namespace

int cmd_memory(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help() || a.positional().empty()) {
    std::printf(
        "Usage: infraplan memory train --scenario F [--stage S] [--json]\n"
        "       infraplan memory serve --scenario F [--batch N] [--context L] [--json]\n\n%s",
        options_help(kSpec).c_str());
    return a.help() ? 0 : 2;
  }
  a.expect_positional(1, 1, "infraplan memory train|serve --scenario F [...]");
  const std::string mode = a.positional()[0];
  if (mode != "train" && mode != "serve")
    throw Error(unknown_name_message("memory mode", mode, {"train", "serve"}));
  if (mode == "train") {
    a.refuse("batch", "applies to 'memory serve' only");
    a.refuse("context", "applies to 'memory serve' only");
  } else {
    a.refuse("stage", "applies to 'memory train' only");
  }
  auto sc = strat::load_scenario(a.require("scenario"));
  if (mode == "train") {
    if (!sc.training) throw Error(sc.origin + ": no 'training' object; add one (docs/scenario.md)");
    const auto& t = *sc.training;
    strat::MemoryLedger L;
    if (auto s = a.get_int("stage", 0, limits::kMaxGpus)) {
      if (*s >= t.pp)
        throw Error("--stage=" + std::to_string(*s) + " is invalid: the pipeline has stages 0.." +
                    std::to_string(t.pp - 1));
      L = strat::training_memory(sc.model, sc.cluster, t, int(*s));
    } else {
      L = strat::training_memory_peak(sc.model, sc.cluster, t);
    }
    if (a.flag("json")) {
      Json j = memory_train_json(sc, L);
      stamp_cli_result(j, report::ResultKind::MemoryTrain, {command_line("memory", argv), &sc, Json()});
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf(
          "%s: %s on %s (%d GPUs), tp=%d pp=%d dp=%d cp=%d ep=%d zero=%d, %s, micro_batch %lld × %lld "
          "tokens\n\n",
          sc.name.c_str(), sc.model.name.c_str(), sc.cluster.name.c_str(), sc.cluster.total_gpus(), t.tp,
          t.pp, t.dp, t.cp, t.ep, t.zero, strat::precision_name(t.precision), (long long)t.micro_batch,
          (long long)t.seq_len);
      print_ledger(L);
    }
    return L.fits() ? 0 : 1;
  }
  if (!sc.serving) throw Error(sc.origin + ": no 'serving' object; add one (docs/scenario.md)");
  const auto& s = *sc.serving;
  // What simulate serve runs: the workload's requests and the KV pool each replica gets.
  const auto setup = sim::serve::serving_setup_from_scenario(sc);
  const auto reqs = sim::serve::make_requests(setup.workload);
  std::int64_t longest = 0;
  double mean_len = 0;
  for (const auto& r : reqs) {
    longest = std::max(longest, r.prompt_tokens + r.output_tokens);
    mean_len += double(r.prompt_tokens + r.output_tokens);
  }
  mean_len = reqs.empty() ? 0 : mean_len / double(reqs.size());
  const std::int64_t cap = sim::serve::instance_kv_capacity_tokens(setup, s.tp, setup.engine.spec.enabled());
  const std::int64_t blocks = cap / s.block_size;
  // A request is admitted when it fits beside the watermark (as simulate serve checks).
  const std::int64_t admissible =
      (blocks - std::int64_t(setup.engine.watermark * double(blocks))) * s.block_size;
  const std::int64_t longest_need = longest + (setup.engine.spec.enabled() ? setup.engine.spec.k : 0);
  const std::int64_t at_max = longest > 0 ? cap / longest : 0;
  const std::int64_t at_mean = mean_len > 0 ? std::int64_t(double(cap) / mean_len) : 0;
  const bool sized_by_flags = a.get("batch").has_value() || a.get("context").has_value();
  const long long context = a.get_int("context", 0, limits::kMaxSeqTokens).value_or(longest);
  const long long batch = a.get_int("batch", 0, limits::kMaxNumSeqs)
                              .value_or(std::max<long long>(
                                  1, std::min<long long>(s.max_num_seqs, cap / std::max(context, 1LL))));
  auto L = strat::serving_memory(sc.model, sc.cluster.gpu, s, batch, context);
  // Without flags the question is simulate serve's: does the workload's longest request fit the pool?
  const bool pool_holds_longest = admissible >= longest_need;
  const bool fits = sized_by_flags ? L.fits() : (pool_holds_longest && L.fits());
  if (a.flag("json")) {
    Json j = memory_serve_json(sc, L, batch, context);
    j["fits"] = fits;
    j["sizing"] = sized_by_flags ? "flags" : "workload";
    j["kv_capacity_tokens"] = cap;
    j["kv_capacity_blocks"] = blocks;
    j["kv_admissible_tokens"] = admissible;
    j["block_size"] = s.block_size;
    j["workload_tokens"] = {
        {"requests", reqs.size()}, {"mean", std::round(mean_len * 10) / 10}, {"max", longest}};
    j["sequences_that_fit"] = {{"at_mean", at_mean}, {"at_max", at_max}};
    j["concurrency_limit"] = std::min<std::int64_t>(s.max_num_seqs, at_mean);
    stamp_cli_result(j, report::ResultKind::MemoryServe, {command_line("memory", argv), &sc, Json()});
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s: %s on %s, tp=%d pp=%d, weights %s, KV %s, %lld sequences × %lld tokens%s\n\n",
                sc.name.c_str(), sc.model.name.c_str(), sc.cluster.gpu.name.c_str(), s.tp, s.pp,
                strat::weight_quant_name(s.weights), std::string(dtype_name(s.kv_dtype)).c_str(), batch,
                context, sized_by_flags ? "" : " (the workload's longest request)");
    char v[200] = "";
    if (!sized_by_flags && !pool_holds_longest)
      std::snprintf(v, sizeof v,
                    "does not fit: the longest request (%lld tokens) exceeds the KV pool (%lld tokens)",
                    (long long)longest_need, (long long)admissible);
    print_ledger(L, v);
    std::printf(
        "KV pool at gpu_memory_utilization %.2f: %lld tokens per replica (%lld blocks of %d; %lld admissible "
        "beside the watermark)\n"
        "workload: %zu requests, prompt + output mean %.0f, longest %lld tokens; the pool holds %lld "
        "sequences of the mean length, %lld of the longest; max_num_seqs %d\n",
        s.gpu_memory_utilization, (long long)cap, (long long)blocks, s.block_size, (long long)admissible,
        reqs.size(), mean_len, (long long)longest, (long long)at_mean, (long long)at_max, s.max_num_seqs);
  }
  return fits ? 0 : 1;
}

}  // namespace infraplan::cli
