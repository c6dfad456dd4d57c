// infraplan memory train|serve --scenario F [...]
#include <cstdio>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/table.hpp"
#include "model/error.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true, "scenario file (docs/scenario.md)"},
    {"batch", true, "serve: concurrent sequences per replica (default: serving.max_num_seqs)"},
    {"context", true, "serve: tokens per sequence, prompt + output (default: the model's max_seq)"},
    {"stage", true, "train: pipeline stage to show (default: the stage with the largest total)"},
    {"json", false, "machine-readable output"},
};

void print_ledger(const strat::MemoryLedger& L) {
  Table t({"line", "GiB", "share", "how"});
  double total = L.total_bytes();
  for (const auto& l : L.lines)
    t.add({l.name, fmt(l.bytes / 1073741824.0, 2), fmt(total > 0 ? 100 * l.bytes / total : 0, 1) + "%",
           l.note});
  t.add({"total", fmt(total / 1073741824.0, 2), "", ""});
  t.add({"capacity", fmt(L.capacity_bytes / 1073741824.0, 2), "", ""});
  std::printf("%s\n%s\n=> %s\n", L.scope.c_str(), t.str().c_str(), L.verdict().c_str());
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
  const std::string mode = a.positional()[0];
  if (mode != "train" && mode != "serve")
    throw Error(unknown_name_message("memory mode", mode, {"train", "serve"}));
  auto sc = strat::load_scenario(a.require("scenario"));
  if (mode == "train") {
    if (!sc.training) throw Error(sc.origin + ": no 'training' object; add one (docs/scenario.md)");
    const auto& t = *sc.training;
    strat::MemoryLedger L;
    if (auto s = a.get_int("stage", 0)) {
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
  long long batch = a.get_int("batch", 0).value_or(s.max_num_seqs);
  long long context = a.get_int("context", 0).value_or(sc.model.max_seq);
  auto L = strat::serving_memory(sc.model, sc.cluster.gpu, s, batch, context);
  auto cap = strat::serving_kv_capacity_tokens(sc.model, sc.cluster.gpu, s);
  if (a.flag("json")) {
    Json j = memory_serve_json(sc, L, batch, context);
    stamp_cli_result(j, report::ResultKind::MemoryServe, {command_line("memory", argv), &sc, Json()});
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s: %s on %s, tp=%d pp=%d, weights %s, KV %s, %lld sequences × %lld tokens\n\n",
                sc.name.c_str(), sc.model.name.c_str(), sc.cluster.gpu.name.c_str(), s.tp, s.pp,
                strat::weight_quant_name(s.weights), std::string(dtype_name(s.kv_dtype)).c_str(), batch,
                context);
    print_ledger(L);
    std::printf(
        "KV capacity at gpu_memory_utilization %.2f: %lld tokens per replica (%.1f sequences of %lld)\n",
        s.gpu_memory_utilization, (long long)cap, context > 0 ? double(cap) / double(context) : 0.0, context);
  }
  return L.fits() ? 0 : 1;
}

}  // namespace infraplan::cli
