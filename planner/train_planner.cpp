#include "planner/train_planner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "common/limits.hpp"
#include "common/error.hpp"

namespace infraplan::plan {

TrainPlanRequest train_plan_request_of(const strat::Scenario& sc) {
  if (!sc.training)
    throw Error(sc.origin + ": the scenario has no 'training' object to plan (docs/scenario.md)");
  TrainPlanRequest r;
  r.model = sc.model;
  r.cluster = sc.cluster;
  r.search.seq_len = sc.training->seq_len;
  r.search.global_batch = sc.training->global_batch;
  r.search.precisions = {sc.training->precision};
  r.search.optimizer = sc.training->optimizer;
  r.search.software = *sc.training;
  if (sc.training->train_tokens > 0) {
    r.default_train_tokens = sc.training->train_tokens;
    r.default_train_tokens_source = "training.train_tokens";
  }
  r.seed = sc.seed;
  return r;
}

namespace {

constexpr double GiB = 1073741824.0;

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * x);
  return b;
}

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f ms", s * 1e3);
  return b;
}

double exposed(const sim::train::TimeBreakdown& b, const std::string& kind) {
  auto it = b.exposed_comm.find(kind);
  return it == b.exposed_comm.end() ? 0 : it->second;
}

}  // namespace

std::string TrainCandidate::label() const {
  char b[180];
  const std::string hsdp =
      cfg.zero >= 1 && cfg.dp_shard > 0 && cfg.dp_shard < cfg.dp ? " hsdp" + std::to_string(cfg.dp_shard) : "";
  std::snprintf(b, sizeof b, "tp%d pp%d dp%d cp%d ep%d zero%d%s mb%lld %s %s%s", cfg.tp, cfg.pp, cfg.dp, cfg.cp,
                cfg.ep, cfg.zero, hsdp.c_str(), static_cast<long long>(cfg.micro_batch),
                model::recompute_name(cfg.recompute), strat::pp_schedule_name(cfg.pp_schedule),
                cfg.pp_schedule == strat::PpSchedule::Interleaved
                    ? ("/v" + std::to_string(cfg.pp_virtual_stages)).c_str()
                    : "");
  return b;
}

Json TrainCandidate::to_json() const {
  Json j = {{"tp", cfg.tp},
            {"pp", cfg.pp},
            {"dp", cfg.dp},
            {"cp", cfg.cp},
            {"ep", cfg.ep},
            {"sp", cfg.sp},
            {"zero", cfg.zero},
            {"micro_batch", cfg.micro_batch},
            {"recompute", model::recompute_name(cfg.recompute)},
            {"pp_schedule", strat::pp_schedule_name(cfg.pp_schedule)},
            {"pp_virtual_stages", cfg.pp_virtual_stages},
            {"dp_shard", cfg.dp_shard},
            {"precision", strat::precision_name(cfg.precision)},
            {"iteration_time_s", iteration_time_s},
            {"estimate_s", estimate_s},
            {"simulated", simulated},
            {"tokens_per_s", tokens_per_s},
            {"mfu", mfu},
            {"peak_bytes", peak_bytes},
            {"breakdown", breakdown.to_json()},
            {"warnings", warnings}};
  if (time_to_train_s > 0) {
    j["time_to_train_s"] = time_to_train_s;
    j["gpu_hours"] = gpu_hours;
  }
  if (has_outlook) {
    j["goodput"] = outlook.goodput.to_json(cfg.gpus());
    j["cost"] = outlook.cost.to_json();
  }
  return j;
}

Json TrainPlan::to_json() const {
  Json c = Json::array();
  for (const auto& x : candidates) c.push_back(x.to_json());
  Json r = Json::array();
  for (const auto& [reason, count] : rejected.counts) r.push_back({{"reason", reason}, {"count", count}});
  Json alt = Json::array();
  for (const auto& a : alternatives) {
    Json j = a.candidate.to_json();
    j["family"] = a.family;
    alt.push_back(j);
  }
  return {{"best", candidates.empty() ? Json() : candidates.front().to_json()},
          {"candidates", c},
          {"alternatives", alt},
          {"rejected", r},
          {"layouts_estimated", layouts_visited},
          {"explanation", explanation}};
}

std::vector<std::string> explain_training(const TrainCandidate& w, const TrainCandidate& l,
                                          const hw::Cluster& c) {
  std::vector<std::string> out;
  const double T = l.iteration_time_s, dT = T - w.iteration_time_s;
  const std::string who = l.label();
  std::string head = who + ": " + (dT >= 0 ? "+" : "") + pct(dT / w.iteration_time_s) + " iteration time";
  // Components that grew the most, largest first.
  struct Part {
    std::string name;
    double delta;
    std::string why;
  };
  std::vector<Part> parts;
  const auto &a = w.breakdown, &b = l.breakdown;
  {
    char why[200];
    std::snprintf(why, sizeof why,
                  "loses %s of its iteration to the pipeline bubble (pp=%d, %lld micro-batches%s)",
                  pct(b.bubble / T).c_str(), l.cfg.pp, static_cast<long long>(l.cfg.micro_batches()),
                  l.cfg.pp_schedule == strat::PpSchedule::Interleaved ? ", interleaved" : "");
    parts.push_back({"bubble", b.bubble - a.bubble, why});
  }
  for (const char* kind : {"tp", "cp", "ep", "pp", "dp"}) {
    double d = exposed(b, kind) - exposed(a, kind);
    std::string why = std::string("waits ") + ms(exposed(b, kind)) + " on exposed " + kind + " communication";
    if (std::string(kind) == "tp" && l.cfg.tp > c.gpus_per_node)
      why += " (tp=" + std::to_string(l.cfg.tp) + " crosses nodes: TP all-reduces run over the NICs)";
    if (std::string(kind) == "dp" && l.cfg.zero == 3)
      why += " (ZeRO-3 gathers parameters in forward and backward: 1.5x DDP traffic)";
    parts.push_back({kind, d, why});
  }
  parts.push_back({"recompute", b.recompute - a.recompute,
                   std::string("spends ") + ms(b.recompute) + " re-running forward passes (recompute=" +
                       model::recompute_name(l.cfg.recompute) + ")"});
  parts.push_back({"compute", b.compute - a.compute,
                   std::string("computes ") + ms(b.compute) + " vs " + ms(a.compute) +
                       " (smaller per-GPU GEMMs at tp=" + std::to_string(l.cfg.tp) +
                       ", micro_batch=" + std::to_string(l.cfg.micro_batch) + ")"});
  parts.push_back({"optimizer", b.optimizer - a.optimizer, std::string("optimizer step ") + ms(b.optimizer)});
  std::sort(parts.begin(), parts.end(), [](const Part& x, const Part& y) { return x.delta > y.delta; });
  std::string body;
  for (const auto& p : parts) {
    if (p.delta <= 0.02 * w.iteration_time_s || p.delta <= 0) break;
    body += (body.empty() ? ": it " : "; it ") + p.why;
    if (body.size() > 200) break;
  }
  if (body.empty()) body = ": the difference is spread over many small terms";
  std::string mem;
  double dm = w.peak_bytes - l.peak_bytes;
  if (dm > 1 * GiB) {
    char b2[96];
    std::snprintf(b2, sizeof b2, " (it frees %.0f GiB per GPU)", dm / GiB);
    mem = b2;
  }
  out.push_back(head + body + mem);
  return out;
}

TrainPlan plan_training(const TrainPlanRequest& r, const hw::CostModel& cost, const coll::CommModel& comm) {
  auto t0 = std::chrono::steady_clock::now();
  TrainPlan plan;
  std::vector<TrainCandidate> all;
  std::int64_t visited = 0;
  std::vector<FeasibleLayout> feasible;
  enumerate_training(
      r.model, r.cluster, r.search,
      [&](FeasibleLayout&& f) {
        ++visited;
        feasible.push_back(std::move(f));
        if (r.progress && visited % 2000 == 0) r.progress(visited, std::int64_t(feasible.size()));
      },
      plan.rejected);
  // Closed-form estimates of every feasible layout, spread over the machine's cores (each
  // estimate is a pure function of its layout; the CommModel's group cache is shared and locked,
  // each worker keeps its own cache of collective times), stored by index: the result does not
  // depend on the number of workers.
  all.resize(feasible.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mu;
  auto worker = [&] {
    sim::train::CommSecondsCache comm_cache;  // layouts that share degrees share collectives
    for (std::size_t i = next++; i < feasible.size(); i = next++) {
      try {
        FeasibleLayout& f = feasible[i];
        auto e =
            sim::train::estimate_training(r.model, r.cluster, f.cfg, cost, comm, &comm_cache, r.sustained_clock);
        TrainCandidate& c = all[i];
        c.cfg = f.cfg;
        c.estimate_s = c.iteration_time_s = e.iteration_time_s;
        c.tokens_per_s = e.tokens_per_s;
        c.mfu = e.mfu;
        c.peak_bytes = f.peak_bytes;
        c.breakdown = e.breakdown;
        c.warnings = std::move(f.warnings);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mu);
        if (!failure) failure = std::current_exception();
        next = feasible.size();
      }
    }
  };
  const unsigned hw_threads = std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = feasible.size() < 512 ? 1u : std::min(hw_threads, 8u);
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  feasible.clear();
  plan.layouts_visited = visited;
  if (all.empty()) {
    std::string why;
    for (const auto& [reason, n] : plan.rejected.counts) why += "\n  " + std::to_string(n) + " × " + reason;
    throw Error("no training layout of " + r.model.name + " fits on " +
                std::to_string(r.cluster.total_gpus()) + " GPUs of " + r.cluster.gpu.name + " at seq " +
                std::to_string(r.search.seq_len) + " and global batch " +
                std::to_string(r.search.global_batch) + ":" + why);
  }
  // Deterministic order: time, then the label.
  std::sort(all.begin(), all.end(), [](const TrainCandidate& a, const TrainCandidate& b) {
    if (a.estimate_s != b.estimate_s) return a.estimate_s < b.estimate_s;
    return a.label() < b.label();
  });
  auto t1 = std::chrono::steady_clock::now();
  double est_s = std::chrono::duration<double>(t1 - t0).count();
  plan.estimates_per_second = est_s > 0 ? double(visited) / est_s : 0;

  // Re-simulate the best few (and a few more, since simulation may re-order close ones).
  const std::size_t k = std::min<std::size_t>(all.size(), std::size_t(std::max(1, r.top)) + 3);
  sim::train::TrainingOptions so;
  so.backend = r.simgrid ? sim::train::Backend::SimGrid : sim::train::Backend::Events;
  // One representative pipeline with collectives on their real groups: exact per-GPU lanes
  // add nothing for a uniform layout and cost 10-100x more (simulator/training_sim.hpp).
  so.mode = sim::train::Mode::Symmetric;
  so.sustained_clock = r.sustained_clock;
  auto simulate = [&](TrainCandidate& c) {
    // Beyond the event simulation's size limit the candidate keeps its closed-form estimate.
    if (sim::train::work_graph_layer_steps(r.model, r.cluster, c.cfg, false) > limits::kMaxWorkGraphLayerSteps)
      return;
    auto s = sim::train::simulate_training(r.model, r.cluster, c.cfg, cost, comm, so);
    c.iteration_time_s = s.iteration_time_s;
    c.tokens_per_s = s.tokens_per_s;
    c.mfu = s.mfu;
    c.peak_bytes = s.peak_bytes;
    c.breakdown = s.breakdown;
    c.simulated = true;
  };
  for (std::size_t i = 0; i < k; ++i) simulate(all[i]);
  // Best (by estimate) of the families a user weighs against each other, when the top of the
  // ranking does not already show one.
  const int g = r.cluster.gpus_per_node;
  const std::pair<std::string, std::function<bool(const strat::TrainingConfig&)>> families[] = {
      {"best with pipeline parallelism", [](const strat::TrainingConfig& t) { return t.pp > 1; }},
      {"best with TP = one node (" + std::to_string(g) + " GPUs)",
       [g](const strat::TrainingConfig& t) { return t.tp == g; }},
      {"best with TP across nodes", [g](const strat::TrainingConfig& t) { return t.tp > g; }},
      {"best without ZeRO-3", [](const strat::TrainingConfig& t) { return t.zero < 3; }},
      {"best with context parallelism", [](const strat::TrainingConfig& t) { return t.cp > 1; }},
      {"best with HSDP (ZeRO sharded inside groups, replicated across)",
       [](const strat::TrainingConfig& t) { return t.zero >= 1 && t.dp_shard > 0 && t.dp_shard < t.dp; }},
  };
  const std::size_t shown = std::min<std::size_t>(all.size(), std::size_t(std::max(1, r.top)));
  for (const auto& [name, in_family] : families) {
    bool already = false;
    for (std::size_t i = 0; i < shown && !already; ++i) already = in_family(all[i].cfg);
    if (already) continue;
    for (std::size_t i = shown; i < all.size(); ++i) {
      if (!in_family(all[i].cfg)) continue;
      TrainCandidate c = all[i];
      if (!c.simulated) simulate(c);
      plan.alternatives.push_back({name, c});
      break;
    }
  }
  std::stable_sort(all.begin(), all.begin() + std::ptrdiff_t(k),
                   [](const TrainCandidate& a, const TrainCandidate& b) {
                     return a.iteration_time_s < b.iteration_time_s;
                   });
  all.resize(std::min<std::size_t>(all.size(), std::size_t(std::max(1, r.top))));
  // Failures, checkpoints and money over the whole run, for what the plan shows.
  auto outlook = [&](TrainCandidate& c) {
    strat::TrainingConfig t = c.cfg;
    if (r.train_tokens <= 0 && r.default_train_tokens > 0) t.train_tokens = r.default_train_tokens;
    c.outlook = sim::train::training_outlook(r.model, r.cluster, t, c.iteration_time_s, r.seed, r.train_tokens);
    if (r.train_tokens <= 0 && r.default_train_tokens > 0 && !r.default_train_tokens_source.empty())
      c.outlook.goodput.train_tokens_source = r.default_train_tokens_source;
    c.has_outlook = true;
  };
  for (auto& c : all) {
    if (r.train_tokens > 0) {
      double tokens_per_iter = double(c.cfg.global_batch) * double(c.cfg.seq_len);
      c.time_to_train_s = r.train_tokens / tokens_per_iter * c.iteration_time_s;
      c.gpu_hours = c.time_to_train_s / 3600 * r.cluster.total_gpus();
    }
    outlook(c);
  }
  for (auto& a : plan.alternatives) outlook(a.candidate);
  plan.candidates = std::move(all);

  const auto& w = plan.candidates.front();
  char line[400];
  std::snprintf(
      line, sizeof line,
      "winner %s: %.3f s per iteration, %.0f tokens/s, MFU %.1f%%, %.1f GiB peak per GPU of %.1f GiB",
      w.label().c_str(), w.iteration_time_s, w.tokens_per_s, 100 * w.mfu, w.peak_bytes / GiB,
      r.cluster.gpu.hbm_bytes / GiB);
  plan.explanation.push_back(line);
  double T = w.iteration_time_s;
  std::snprintf(
      line, sizeof line,
      "its time goes to compute %.0f%%, recompute %.0f%%, bubble %.0f%%, exposed communication %.0f%%, "
      "optimizer %.0f%%",
      100 * w.breakdown.compute / T, 100 * w.breakdown.recompute / T, 100 * w.breakdown.bubble / T,
      100 * w.breakdown.exposed_comm_total() / T, 100 * w.breakdown.optimizer / T);
  plan.explanation.push_back(line);
  {
    const auto& gp = w.outlook.goodput;
    std::snprintf(line, sizeof line,
                  "over the run (%.3g tokens): %.1f days without failures, %.1f days with them (useful %.1f%%: "
                  "one interruption every %.1f h, checkpoint %.0f GB in %.0f s, restart %.0f s); checkpoint every "
                  "%.0f s (%.0f iterations, Young/Daly); %.0f USD at %.2f USD per GPU-hour",
                  gp.train_tokens, gp.compute_s / 86400, gp.expected_wall_s / 86400, 100 * gp.useful_fraction,
                  gp.job_mtbf_s / 3600, gp.checkpoint_bytes / 1e9, gp.checkpoint_write_s, gp.restart_s,
                  gp.checkpoint_interval_s, gp.checkpoint_interval_iterations, w.outlook.cost.usd_total,
                  w.outlook.cost.price_per_gpu_hour);
    plan.explanation.push_back(line);
  }
  if (w.cfg.tp > 1 && w.cfg.tp <= r.cluster.gpus_per_node && r.cluster.nodes > 1)
    plan.explanation.push_back("TP stays inside a node (tp=" + std::to_string(w.cfg.tp) +
                               " <= " + std::to_string(r.cluster.gpus_per_node) +
                               " GPUs per node): its all-reduces run on NVLink; only " +
                               (w.cfg.pp > 1 ? "PP and " : "") + "DP/CP traffic crosses the fabric");
  for (std::size_t i = 1; i < plan.candidates.size(); ++i)
    for (auto& s : explain_training(w, plan.candidates[i], r.cluster)) plan.explanation.push_back(s);
  for (const auto& a : plan.alternatives)
    for (auto& s : explain_training(w, a.candidate, r.cluster))
      plan.explanation.push_back(a.family + ", " + s);
  plan.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return plan;
}

}  // namespace infraplan::plan
