#include "planner/serve_planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "strategies/memory_ledger.hpp"

namespace infraplan::plan {

namespace sv = infraplan::sim::serve;

hw::Cluster cluster_for(const hw::GpuSpec& gpu, int gpus, int gpus_per_node) {
  const int nodes = std::max(1, (gpus + gpus_per_node - 1) / gpus_per_node);
  for (const auto& name : hw::cluster_preset_names()) {
    hw::Cluster c = hw::cluster_preset(name);
    if (c.gpu.name == gpu.name && c.gpus_per_node == gpus_per_node) {
      c.nodes = nodes;
      return c;
    }
  }
  return hw::resolve_cluster(Json{
      {"gpu", gpu.name}, {"nodes", nodes}, {"gpus_per_node", gpus_per_node}, {"name", gpu.name + "-nodes"}});
}

std::string ServeCandidate::label() const {
  char b[160];
  std::string q = std::string(strat::weight_quant_name(weights)) + "/kv-" + std::string(dtype_name(kv_dtype));
  if (mode == "aggregated")
    std::snprintf(b, sizeof b, "aggregated tp%d %s budget%lld%s", tp, q.c_str(),
                  static_cast<long long>(max_batched_tokens), speculative ? " +spec" : "");
  else
    std::snprintf(b, sizeof b, "disaggregated P tp%d / D tp%d %s%s", prefill_tp, decode_tp, q.c_str(),
                  speculative ? " +spec" : "");
  return b;
}

Json ServeCandidate::to_json() const {
  Json pts = Json::array();
  for (const auto& p : points)
    pts.push_back({{"rate_rps", p.rate_rps},
                   {"attainment", p.attainment},
                   {"output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu},
                   {"tokens_per_s_per_user", p.tokens_per_s_per_user},
                   {"ttft_p90_ms", p.ttft_p90_ms},
                   {"tpot_p90_ms", p.tpot_p90_ms}});
  return {{"mode", mode},
          {"label", label()},
          {"weights", strat::weight_quant_name(weights)},
          {"kv_dtype", dtype_name(kv_dtype)},
          {"speculative", speculative},
          {"tp", mode == "aggregated" ? tp : decode_tp},
          {"prefill_tp", prefill_tp},
          {"decode_tp", decode_tp},
          {"max_batched_tokens", max_batched_tokens},
          {"replicas", replicas},
          {"prefill_instances", prefill_instances},
          {"decode_instances", decode_instances},
          {"gpus", gpus},
          {"prefill_gpus", prefill_gpus},
          {"decode_gpus", decode_gpus},
          {"capacity_rps_per_instance", capacity_rps},
          {"decode_capacity_rps_per_instance", decode_capacity_rps},
          {"kv_capacity_tokens", kv_capacity_tokens},
          {"goodput_rps", goodput_rps},
          {"goodput_rps_per_gpu", goodput_rps_per_gpu},
          {"slo_attainment", attainment},
          {"ttft_p90_ms", ttft_p90_ms},
          {"tpot_p90_ms", tpot_p90_ms},
          {"tokens_per_s_per_user", tokens_per_s_per_user},
          {"meets_target", meets_target},
          {"output_tokens_per_s", output_tokens_per_s},
          {"cost",
           {{"usd_per_hour", usd_per_hour},
            {"usd_per_million_output_tokens", usd_per_million_output_tokens},
            {"usd_per_request_at_slo", usd_per_request}}},
          {"load_points", pts}};
}

Json ServePlan::to_json() const {
  Json c = Json::array();
  for (const auto& x : candidates) c.push_back(x.to_json());
  Json p = Json::array();
  for (std::size_t i = 0; i < pareto.size(); ++i)
    p.push_back({{"candidate", pareto_labels[i]},
                 {"rate_rps", pareto[i].rate_rps},
                 {"output_tokens_per_s_per_gpu", pareto[i].output_tokens_per_s_per_gpu},
                 {"tokens_per_s_per_user", pareto[i].tokens_per_s_per_user}});
  Json best;
  if (!candidates.empty()) {
    const auto& b = candidates.front();
    best = {{"mode", b.mode},
            {"gpus", b.gpus},
            {"prefill_gpus", b.prefill_gpus},
            {"decode_gpus", b.decode_gpus},
            {"tp", b.mode == "aggregated" ? b.tp : b.decode_tp},
            {"prefill_tp", b.prefill_tp},
            {"decode_tp", b.decode_tp},
            {"replicas", b.replicas},
            {"prefill_instances", b.prefill_instances},
            {"decode_instances", b.decode_instances},
            {"weights", strat::weight_quant_name(b.weights)},
            {"kv_dtype", dtype_name(b.kv_dtype)},
            {"goodput_rps", b.goodput_rps},
            {"goodput_rps_per_gpu", b.goodput_rps_per_gpu},
            {"meets_target", b.meets_target},
            {"label", b.label()},
            {"cost", b.to_json().at("cost")}};
  }
  Json rej = Json::array();
  for (const auto& [reason, count] : rejected) rej.push_back({{"reason", reason}, {"count", count}});
  Json out = {{"best", best},    {"candidates", c},           {"pareto", p}, {"explanation", explanation},
              {"rejected", rej}, {"simulations", simulations}};
  if (!candidates.empty()) out["cost"] = candidates.front().to_json().at("cost");
  return out;
}

namespace {

struct Instance {
  int tp = 1;
  strat::WeightQuant weights = strat::WeightQuant::BF16;
  Dtype kv = Dtype::BF16;
  std::int64_t budget = 8192;
  bool spec = false;
};

class Searcher {
 public:
  Searcher(const ServeSearch& s, const hw::CostModel& cm, ServePlan& plan) : s_(s), cm_(cm), plan_(plan) {}

  sv::ServingSetup setup(const Instance& in, double rate, std::int64_t requests, int replicas,
                         std::optional<sv::DisaggConfig> pd, sv::Slo slo) const {
    sv::ServingSetup st;
    st.name = "plan";
    st.model = s_.model;
    st.serving.tp = in.tp;
    st.serving.replicas = replicas;
    st.serving.weights = in.weights;
    st.serving.kv_dtype = in.kv;
    st.serving.max_num_seqs = 256;
    st.serving.max_batched_tokens = in.budget;
    st.engine.sched.chunked_prefill = true;
    st.engine.routing = sv::Routing::LeastOutstanding;
    st.engine.prefix_cache = true;
    if (in.spec && s_.draft) {
      st.engine.spec.method = sv::SpecMethod::Draft;
      st.engine.spec.k = 4;
      st.engine.spec.acceptance = s_.draft_acceptance;
      st.engine.spec.draft_model = *s_.draft;
    }
    int gpus = replicas * in.tp;
    if (pd) {
      st.engine.pd = *pd;
      gpus = pd->total_gpus();
    }
    st.cluster = cluster_for(s_.gpu, gpus, s_.gpus_per_node);
    st.workload = s_.workload;
    st.workload.slo = slo;
    auto& k = st.workload.classes.at(0);
    k.requests = requests;
    k.arrival.kind = sv::ArrivalSpec::Kind::Poisson;
    k.arrival.rate_per_s = rate;
    return st;
  }

  sv::ServingResult run(const sv::ServingSetup& st) {
    ++plan_.simulations;
    sv::SimOptions o;
    o.keep_requests = false;
    o.sample_interval_s = 1e9;
    return sv::simulate_serving(st, cm_, o);
  }

  /// Highest rate (requests/s) at which `make(rate)` meets the attainment; load points recorded.
  /// Requests of a probe at `rate`: enough arrivals to cover several request lifetimes, so a
  /// saturated instance shows its queue growing rather than absorbing one burst.
  std::int64_t probe_size(double rate) const {
    const auto& k = s_.workload.classes.at(0);
    const double lifetime_s = k.output.mean * s_.workload.slo.tpot_ms / 1000 + s_.workload.slo.ttft_ms / 1000;
    const double window_s = std::max(20.0, 3 * lifetime_s);
    return std::clamp<std::int64_t>(std::int64_t(std::ceil(rate * window_s)), s_.probe_requests, 6000);
  }

  double capacity(const std::function<sv::ServingSetup(double, std::int64_t)>& make, int gpus,
                  std::vector<LoadPoint>* points) {
    auto probe = [&](double rate, bool& ok) {
      auto r = run(make(rate, probe_size(rate)));
      const auto& m = r.metrics;
      ok = m.slo_attainment >= s_.attainment;
      if (points && ok) {
        LoadPoint p;
        p.rate_rps = rate;
        p.attainment = m.slo_attainment;
        p.output_tokens_per_s_per_gpu = m.output_tokens_per_s / gpus;
        p.tokens_per_s_per_user = m.tpot_ms.mean > 0 ? 1000.0 / m.tpot_ms.mean : 0;
        p.ttft_p90_ms = m.ttft_ms.p90;
        p.tpot_p90_ms = m.tpot_ms.p90;
        points->push_back(p);
      }
    };
    double lo = 0, hi = 0.5;
    bool ok = false;
    // Grow until the SLO breaks (at most 2^14 × the start), then bisect.
    for (int i = 0; i < 15; ++i) {
      probe(hi, ok);
      if (!ok) break;
      lo = hi;
      hi *= 2;
    }
    if (ok) return lo;
    for (int i = 0; i < 5; ++i) {
      double mid = 0.5 * (lo + hi);
      probe(mid, ok);
      (ok ? lo : hi) = mid;
    }
    return lo;
  }

  bool fits(const Instance& in) const {
    strat::ServingConfig sc;
    sc.tp = in.tp;
    sc.weights = in.weights;
    sc.kv_dtype = in.kv;
    sc.max_batched_tokens = in.budget;
    try {
      strat::validate_serving(sc, s_.model, s_.gpu);
    } catch (const Error&) {
      return false;
    }
    // At least a few full requests of KV.
    const auto& k = s_.workload.classes.at(0);
    double per_req = double(k.prompt.mean + k.output.mean + k.prefix_shared_tokens);
    return double(strat::serving_kv_capacity_tokens(s_.model, s_.gpu, sc)) > 4 * per_req;
  }

  std::int64_t kv_capacity(const Instance& in) const {
    strat::ServingConfig sc;
    sc.tp = in.tp;
    sc.weights = in.weights;
    sc.kv_dtype = in.kv;
    sc.max_batched_tokens = in.budget;
    return strat::serving_kv_capacity_tokens(s_.model, s_.gpu, sc);
  }

 private:
  const ServeSearch& s_;
  const hw::CostModel& cm_;
  ServePlan& plan_;
};

std::string no_room(const Instance& in) {
  return "tp=" + std::to_string(in.tp) + " " + strat::weight_quant_name(in.weights) +
         ": weights + KV of 4 mean requests do not fit on the instance";
}

Dtype kv_for(strat::WeightQuant q, const hw::GpuSpec& g) {
  if ((q == strat::WeightQuant::FP8 || q == strat::WeightQuant::NVFP4) && g.supports(Dtype::FP8))
    return Dtype::FP8;
  return Dtype::BF16;
}

}  // namespace

ServePlan plan_serving(const ServeSearch& s, const hw::CostModel& cm) {
  auto t0 = std::chrono::steady_clock::now();
  if (s.workload.classes.size() != 1)
    throw Error("plan serve: the workload must have exactly one request class");
  if ((s.target_rate > 0) == (s.gpus > 0)) throw Error("plan serve: give exactly one of --rate or --gpus");
  if (s.workload.slo.ttft_ms <= 0 || s.workload.slo.tpot_ms <= 0)
    throw Error("plan serve: --ttft-ms and --tpot-ms must both be > 0");
  ServePlan plan;
  Searcher se(s, cm, plan);
  const sv::Slo slo = s.workload.slo;
  std::vector<int> tps = s.tps;
  if (tps.empty())
    for (int t = 1; t <= s.gpus_per_node; t *= 2)
      if (s.model.heads % t == 0) tps.push_back(t);
  std::vector<bool> specs = {false};
  if (s.draft) specs.push_back(true);
  auto say = [&](const std::string& m) {
    if (s.progress) s.progress(m);
  };

  std::vector<ServeCandidate> cands;
  for (auto q : s.quants) {
    for (bool spec : specs) {
      // Per-TP instance capacities, reused by the aggregated and disaggregated candidates.
      for (int tp : tps) {
        for (std::int64_t budget : {std::int64_t(2048), std::int64_t(8192)}) {
          Instance in{tp, q, kv_for(q, s.gpu), budget, spec};
          if (!se.fits(in)) {
            plan.rejected[no_room(in)] += 1;
            continue;
          }
          say("aggregated tp" + std::to_string(tp) + " " + strat::weight_quant_name(q) + " budget " +
              std::to_string(budget));
          ServeCandidate c;
          c.mode = "aggregated";
          c.weights = q;
          c.kv_dtype = in.kv;
          c.speculative = spec;
          c.tp = tp;
          c.max_batched_tokens = budget;
          c.kv_capacity_tokens = se.kv_capacity(in);
          c.capacity_rps = se.capacity(
              [&](double rate, std::int64_t n) { return se.setup(in, rate, n, 1, std::nullopt, slo); }, tp,
              &c.points);
          if (c.capacity_rps > 0)
            cands.push_back(c);
          else
            plan.rejected["aggregated: meets the SLOs at no probed load (from 0.5 req/s per instance)"] += 1;
        }
      }
      if (!s.disaggregation) continue;
      // Pools are measured one at a time with the other pool over-provisioned for the probed rate
      // (sized from the aggregated capacity, which includes both phases), judged by both SLOs:
      // TTFT also catches requests queueing for decode admission when the decode pool saturates.
      double agg_best = 0;
      int agg_best_tp = tps.back();
      for (const auto& c : cands)
        if (c.mode == "aggregated" && c.weights == q && c.speculative == spec &&
            c.capacity_rps / c.tp > agg_best) {
          agg_best = c.capacity_rps / c.tp;
          agg_best_tp = c.tp;
        }
      if (agg_best <= 0) continue;
      std::vector<std::pair<int, double>> prefill_cap, decode_cap;
      for (int tp : tps) {
        Instance in{tp, q, kv_for(q, s.gpu), 8192, spec};
        if (!se.fits(in)) {
          plan.rejected[no_room(in)] += 1;
          continue;
        }
        say("prefill instance tp" + std::to_string(tp) + " " + strat::weight_quant_name(q));
        double cap = se.capacity(
            [&](double rate, std::int64_t n) {
              int dn = int(std::ceil(1.5 * rate / (agg_best * agg_best_tp))) + 1;
              return se.setup(in, rate, n, 1, sv::DisaggConfig{true, 1, tp, dn, agg_best_tp}, slo);
            },
            tp, nullptr);
        if (cap > 0)
          prefill_cap.push_back({tp, cap});
        else
          plan.rejected["prefill pool: meets TTFT at no probed load (from 0.5 req/s per instance)"] += 1;
      }
      if (prefill_cap.empty()) continue;
      auto best_p = *std::max_element(
          prefill_cap.begin(), prefill_cap.end(),
          [](const auto& x, const auto& y) { return x.second / x.first < y.second / y.first; });
      for (int tp : tps) {
        Instance in{tp, q, kv_for(q, s.gpu), 8192, spec};
        if (!se.fits(in)) {
          plan.rejected[no_room(in)] += 1;
          continue;
        }
        say("decode instance tp" + std::to_string(tp) + " " + strat::weight_quant_name(q));
        double cap = se.capacity(
            [&](double rate, std::int64_t n) {
              int pn = int(std::ceil(1.5 * rate / best_p.second)) + 1;
              return se.setup(in, rate, n, 1, sv::DisaggConfig{true, pn, best_p.first, 1, tp}, slo);
            },
            tp, nullptr);
        if (cap > 0)
          decode_cap.push_back({tp, cap});
        else
          plan.rejected["decode pool: meets TPOT at no probed load (from 0.5 req/s per instance)"] += 1;
      }
      for (auto [ptp, pc] : prefill_cap)
        for (auto [dtp, dc] : decode_cap) {
          ServeCandidate c;
          c.mode = "disaggregated";
          c.weights = q;
          c.kv_dtype = kv_for(q, s.gpu);
          c.speculative = spec;
          c.prefill_tp = ptp;
          c.decode_tp = dtp;
          c.capacity_rps = pc;
          c.decode_capacity_rps = dc;
          c.kv_capacity_tokens = se.kv_capacity(Instance{dtp, q, c.kv_dtype, 8192, spec});
          cands.push_back(c);
        }
    }
  }
  if (cands.empty())
    throw Error("plan serve: no deployment of " + s.model.name + " on " + s.gpu.name +
                " meets the SLOs even at the lowest probed load (0.5 requests/s per instance), or none fits "
                "in memory");

  // Size every candidate for the target, then verify the whole deployment by simulation.
  for (auto& c : cands) {
    const bool agg = c.mode == "aggregated";
    if (s.target_rate > 0) {
      if (agg) {
        c.replicas = int(std::ceil(s.target_rate / c.capacity_rps - 1e-9));
      } else {
        c.prefill_instances = int(std::ceil(s.target_rate / c.capacity_rps - 1e-9));
        c.decode_instances = int(std::ceil(s.target_rate / c.decode_capacity_rps - 1e-9));
      }
    } else {
      if (agg) {
        c.replicas = s.gpus / c.tp;
      } else {
        // Split the GPUs in proportion to the work: prefill GPUs ∝ tp_p / cap_p.
        double wp = c.prefill_tp / c.capacity_rps, wd = c.decode_tp / c.decode_capacity_rps;
        int gp = int(std::round(s.gpus * wp / (wp + wd) / c.prefill_tp)) * c.prefill_tp;
        gp = std::clamp(gp, c.prefill_tp, s.gpus - c.decode_tp);
        c.prefill_instances = gp / c.prefill_tp;
        c.decode_instances = (s.gpus - gp) / c.decode_tp;
      }
    }
    if ((agg && c.replicas < 1) || (!agg && (c.prefill_instances < 1 || c.decode_instances < 1))) {
      plan.rejected["needs more GPUs than the budget of " + std::to_string(s.gpus)] += 1;
      continue;
    }
    // Verify: the target rate, or the sized deployment's estimated capacity for a GPU budget.
    for (int attempt = 0; attempt < 4; ++attempt) {
      Instance in{agg ? c.tp : c.decode_tp, c.weights, c.kv_dtype, c.max_batched_tokens, c.speculative};
      std::optional<sv::DisaggConfig> pd;
      double rate;
      if (agg) {
        rate = s.target_rate > 0 ? s.target_rate : c.replicas * c.capacity_rps;
      } else {
        pd = sv::DisaggConfig{true, c.prefill_instances, c.prefill_tp, c.decode_instances, c.decode_tp};
        rate = s.target_rate > 0 ? s.target_rate
                                 : std::min(c.prefill_instances * c.capacity_rps,
                                            c.decode_instances * c.decode_capacity_rps);
      }
      say("verify " + c.label());
      auto r = se.run(se.setup(in, rate, se.probe_size(rate), agg ? c.replicas : 1, pd, slo));
      const auto& m = r.metrics;
      c.gpus =
          agg ? c.replicas * c.tp : c.prefill_instances * c.prefill_tp + c.decode_instances * c.decode_tp;
      c.prefill_gpus = agg ? 0 : c.prefill_instances * c.prefill_tp;
      c.decode_gpus = agg ? 0 : c.decode_instances * c.decode_tp;
      c.attainment = m.slo_attainment;
      // Goodput at the offered load: the rate of requests that meet both SLOs in steady state
      // (the simulation's own goodput divides by a duration that includes the final drain).
      c.goodput_rps = rate * m.slo_attainment;
      c.goodput_rps_per_gpu = c.goodput_rps / c.gpus;
      // Output tokens at the offered load: the simulated tokens per completed request times the
      // rate (the drain at the end of the simulation cancels in the ratio).
      c.output_tokens_per_s = m.throughput_rps > 0 ? rate * m.output_tokens_per_s / m.throughput_rps : 0;
      c.usd_per_hour = s.price_per_gpu_hour * c.gpus;
      c.usd_per_million_output_tokens =
          c.output_tokens_per_s > 0 ? c.usd_per_hour / (c.output_tokens_per_s * 3600 / 1e6) : 0;
      c.usd_per_request = c.goodput_rps > 0 ? c.usd_per_hour / (c.goodput_rps * 3600) : 0;
      c.ttft_p90_ms = m.ttft_ms.p90;
      c.tpot_p90_ms = m.tpot_ms.p90;
      c.tokens_per_s_per_user = m.tpot_ms.mean > 0 ? 1000.0 / m.tpot_ms.mean : 0;
      c.meets_target = m.slo_attainment >= s.attainment;
      if (c.meets_target) {
        LoadPoint p;
        p.rate_rps = rate;
        p.attainment = m.slo_attainment;
        p.output_tokens_per_s_per_gpu = m.output_tokens_per_s / c.gpus;
        p.tokens_per_s_per_user = c.tokens_per_s_per_user;
        p.ttft_p90_ms = m.ttft_ms.p90;
        p.tpot_p90_ms = m.tpot_ms.p90;
        c.points.push_back(p);
      }
      if (c.meets_target || s.gpus > 0) break;
      // Short of the target: grow the weaker side and try again.
      if (agg) {
        ++c.replicas;
      } else if (m.ttft_ms.p90 > slo.ttft_ms) {
        ++c.prefill_instances;
      } else {
        ++c.decode_instances;
      }
    }
  }
  cands.erase(std::remove_if(cands.begin(), cands.end(), [](const ServeCandidate& c) { return c.gpus == 0; }),
              cands.end());
  std::sort(cands.begin(), cands.end(), [&](const ServeCandidate& a, const ServeCandidate& b) {
    if (a.meets_target != b.meets_target) return a.meets_target;
    if (s.target_rate > 0 && a.gpus != b.gpus) return a.gpus < b.gpus;
    if (a.goodput_rps_per_gpu != b.goodput_rps_per_gpu) return a.goodput_rps_per_gpu > b.goodput_rps_per_gpu;
    if (a.tokens_per_s_per_user != b.tokens_per_s_per_user) return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
    return a.label() < b.label();
  });
  plan.candidates = cands;

  // Pareto front over every load point that met the SLOs: output tokens/s per GPU vs tokens/s per user.
  std::vector<std::pair<LoadPoint, std::string>> pts;
  for (const auto& c : cands)
    for (const auto& p : c.points) pts.push_back({p, c.label()});
  std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) {
    if (a.first.output_tokens_per_s_per_gpu != b.first.output_tokens_per_s_per_gpu)
      return a.first.output_tokens_per_s_per_gpu > b.first.output_tokens_per_s_per_gpu;
    return a.first.tokens_per_s_per_user > b.first.tokens_per_s_per_user;
  });
  double best_user = -1;
  for (const auto& [p, label] : pts) {
    // Non-dominated, and at least 3% faster per user than the previous point kept.
    if (p.tokens_per_s_per_user > 1.03 * best_user) {
      plan.pareto.push_back(p);
      plan.pareto_labels.push_back(label);
      best_user = p.tokens_per_s_per_user;
    }
  }

  // Explanation.
  if (!plan.candidates.empty()) {
    const auto& b = plan.candidates.front();
    char line[400];
    std::snprintf(line, sizeof line,
                  "best: %s on %d GPUs — %.2f requests/s goodput (%.3f per GPU), %.0f%% of requests within "
                  "TTFT %.0f ms and TPOT %.0f ms",
                  b.label().c_str(), b.gpus, b.goodput_rps, b.goodput_rps_per_gpu, 100 * b.attainment,
                  slo.ttft_ms, slo.tpot_ms);
    plan.explanation.push_back(line);
    if (s.price_per_gpu_hour > 0) {
      std::snprintf(line, sizeof line,
                    "cost at %.2f USD per GPU-hour: %.2f USD per hour, %.3f USD per million output tokens "
                    "(%.0f output tokens/s), %.5f USD per request within the SLOs",
                    s.price_per_gpu_hour, b.usd_per_hour, b.usd_per_million_output_tokens, b.output_tokens_per_s,
                    b.usd_per_request);
      plan.explanation.push_back(line);
    }
    for (const auto& c : plan.candidates) {
      if (c.mode != "disaggregated") continue;
      const double pg = c.prefill_tp / c.capacity_rps, dg = c.decode_tp / c.decode_capacity_rps;
      std::snprintf(line, sizeof line,
                    "prefill:decode = 1:%.1f by GPU-time per request (prefill instance tp%d sustains %.2f "
                    "req/s within TTFT, "
                    "decode instance tp%d %.2f req/s within TPOT): %d prefill and %d decode GPUs here",
                    dg / pg, c.prefill_tp, c.capacity_rps, c.decode_tp, c.decode_capacity_rps, c.prefill_gpus,
                    c.decode_gpus);
      plan.explanation.push_back(line);
      break;
    }
    const ServeCandidate* agg = nullptr;
    const ServeCandidate* dis = nullptr;
    for (const auto& c : plan.candidates) {
      if (!agg && c.mode == "aggregated") agg = &c;
      if (!dis && c.mode == "disaggregated") dis = &c;
    }
    if (agg && dis) {
      const auto* other = b.mode == "aggregated" ? dis : agg;
      std::snprintf(line, sizeof line, "best %s alternative: %s on %d GPUs, %.3f requests/s per GPU%s",
                    other->mode.c_str(), other->label().c_str(), other->gpus, other->goodput_rps_per_gpu,
                    other->meets_target ? "" : " (misses the target)");
      plan.explanation.push_back(line);
    }
  }
  plan.search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return plan;
}

}  // namespace infraplan::plan
