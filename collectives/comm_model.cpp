#include "collectives/comm_model.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "common/error.hpp"

namespace infraplan::coll {

double LoweredCollective::hop_pad_s(int k, bool intra) const {
  const PatternCost& c = *costs[std::size_t(k)];
  const double hop = c.inter && !intra ? hop_latency_s_inter : hop_latency_s_intra;
  return std::max(0.0, hop - c.max_latency_s);
}

double LoweredCollective::phase_seconds(std::size_t i, long long steps) const {
  const Phase& ph = phases[i];
  const PatternCost& c = *costs[std::size_t(ph.pattern)];
  // Steps charged the intra hop latency come first in the phase's step count.
  const long long intra = std::min(steps, ph.intra_steps);
  return double(steps) * c.step_seconds(ph.unit_bytes, protocol_efficiency) +
         double(intra) * hop_pad_s(ph.pattern, true) + double(steps - intra) * hop_pad_s(ph.pattern);
}

CommModel::CommModel(const hw::Cluster& cluster, CommProfile profile)
    : fabric_(cluster), profile_(std::move(profile)) {}

CommModel::~CommModel() = default;

const CommModel::GroupEntry& CommModel::group(CollectiveOp op, const std::vector<int>& ranks) const {
  std::uint64_t h = 1469598103934665603ull ^ std::uint64_t(op);
  for (int r : ranks) h = (h ^ std::uint64_t(std::uint32_t(r))) * 1099511628211ull;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(h);
    if (it != cache_.end())
      for (const auto& e : it->second)
        if (e->op == op && e->ranks == ranks) return *e;
  }
  // Built outside the lock (threads of a planner's search build different groups at once); the
  // first entry stored for a group wins, so every caller sees the same one.
  auto g = std::make_unique<GroupEntry>();
  g->op = op;
  g->ranks = ranks;
  g->shape = group_shape(cluster(), ranks);
  if (op == CollectiveOp::AllToAll && g->shape.n > 256)
    throw Error("alltoall is modelled for groups of up to 256 ranks (got " + std::to_string(g->shape.n) +
                ")");
  g->algorithms = candidate_algorithms(op, g->shape, cluster(), profile_);
  for (Algorithm a : g->algorithms) {
    auto e = std::make_unique<PlanEntry>();
    e->plan = make_plan(op, a, g->shape, cluster(), profile_, ranks);
    for (const auto& pat : e->plan.patterns) {
      e->costs.push_back(pattern_cost(fabric_, pat));
      const PatternCost& c = e->costs.back();
      std::string name;
      if (c.bottleneck_link >= 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " (%.4g GB/s)", c.bottleneck_Bps / 1e9);
        name = fabric_.link_name(c.bottleneck_link) + buf;
      }
      e->bottleneck.push_back(std::move(name));
    }
    g->plans.push_back(std::move(e));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& bucket = cache_[h];
  for (const auto& e : bucket)
    if (e->op == op && e->ranks == ranks) return *e;
  bucket.push_back(std::move(g));
  return *bucket.back();
}

double CommModel::plan_seconds(const GroupEntry& g, const PlanEntry& e, double bytes, Protocol p,
                               std::vector<Phase>* phases) const {
  const ProtoLatency& lat = profile_.lat(e.plan.latency_class, p);
  const bool inter = g.shape.nodes > 1;
  const double eff = profile_.step_efficiency(g.op, p, inter);
  double t = std::max(0.0, lat.base_us + profile_.extra_latency_us(g.op, g.shape.n, inter)) * 1e-6;
  for (const Phase& ph : phases_for(e.plan, bytes, profile_.pipeline_chunk_bytes)) {
    const PatternCost& c = e.costs[std::size_t(ph.pattern)];
    const double hop = (c.inter ? lat.inter_hop_us : lat.intra_hop_us) * 1e-6;
    const double hop_intra = lat.intra_hop_us * 1e-6;
    const long long intra = std::min(ph.steps, ph.intra_steps);
    t += double(ph.steps) * c.step_seconds(ph.unit_bytes, eff) +
         double(intra) * std::max(0.0, hop_intra - c.max_latency_s) +
         double(ph.steps - intra) * std::max(0.0, hop - c.max_latency_s);
    if (phases) phases->push_back(ph);
  }
  return t;
}

CollectiveEstimate CommModel::finish(CollectiveOp op, double bytes, const GroupEntry& g, const PlanEntry* e,
                                     Protocol p, double seconds) const {
  CollectiveEstimate r;
  r.op = op;
  r.ranks = g.shape.n;
  r.nodes = g.shape.nodes;
  r.bytes = bytes;
  r.seconds = seconds;
  r.algbw_GBps = algbw_GBps(bytes, seconds);
  r.busbw_GBps = busbw_GBps(op, g.shape.n, bytes, seconds);
  r.protocol = p;
  if (!e) {
    r.algorithm = Algorithm::Fit;
    r.bottleneck = "measured fit (" + std::string(g.shape.nodes > 1 ? "inter" : "intra") + "-node)";
    r.bytes_per_rank = bytes_per_rank(op, g.shape.n, bytes);
    return r;
  }
  r.algorithm = e->plan.algorithm;
  if (g.shape.n < 2) {
    r.bottleneck = "none (single rank)";
    return r;
  }
  // Busiest sender and the slowest pattern's limiting link.
  double worst = -1;
  for (const Phase& ph : phases_for(e->plan, bytes, profile_.pipeline_chunk_bytes)) {
    const PatternCost& c = e->costs[std::size_t(ph.pattern)];
    r.bytes_per_rank += double(ph.steps) * ph.unit_bytes * c.max_src_fraction;
    const double t = double(ph.steps) * c.step_seconds(ph.unit_bytes, 1.0);
    if (t > worst && c.bottleneck_link >= 0) {
      worst = t;
      r.bottleneck = e->bottleneck[std::size_t(ph.pattern)];
    }
  }
  return r;
}

CollectiveEstimate CommModel::estimate(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  if (!(bytes >= 0)) throw Error("bytes must be >= 0");
  const GroupEntry& g = group(op, ranks);
  if (g.shape.n >= 2) {
    if (auto fit = profile_.find_fit(op, g.shape.n, g.shape.nodes > 1)) {
      const double t = fit->latency_us * 1e-6 + bytes * busbw_factor(op, g.shape.n) / (fit->bw_GBps * 1e9);
      return finish(op, bytes, g, nullptr, Protocol::Simple, t);
    }
  }
  double best = std::numeric_limits<double>::infinity();
  const PlanEntry* be = nullptr;
  Protocol bp = Protocol::Simple;
  for (std::size_t i = 0; i < g.plans.size(); ++i) {
    const PlanEntry& e = *g.plans[i];
    for (int pi = 0; pi < 3; ++pi) {
      if (!profile_.protocol_enabled[std::size_t(pi)]) continue;
      if (e.plan.algorithm == Algorithm::NVLS && pi != int(Protocol::Simple)) continue;
      const double t = plan_seconds(g, e, bytes, Protocol(pi), nullptr);
      if (t < best) {
        best = t;
        be = &e;
        bp = Protocol(pi);
      }
    }
  }
  if (!be) throw Error("comm profile enables no protocol; enable one of LL, LL128, Simple");
  if (g.shape.n < 2) best = 0;
  return finish(op, bytes, g, be, bp, best);
}

CollectiveEstimate CommModel::estimate(CollectiveOp op, double bytes, const std::vector<int>& ranks,
                                       Algorithm algo, Protocol proto) const {
  LoweredCollective l = lower(op, bytes, ranks, algo, proto);
  const GroupEntry& g = group(op, ranks);
  for (std::size_t i = 0; i < g.algorithms.size(); ++i)
    if (g.algorithms[i] == algo) return finish(op, bytes, g, g.plans[i].get(), proto, l.seconds);
  return {};
}

LoweredCollective CommModel::lower(CollectiveOp op, double bytes, const std::vector<int>& ranks,
                                   std::optional<Algorithm> algo, std::optional<Protocol> proto) const {
  const GroupEntry& g = group(op, ranks);
  Algorithm a;
  Protocol p;
  if (!algo || !proto) {
    CollectiveEstimate best = estimate(op, bytes, ranks);
    a = algo.value_or(best.algorithm == Algorithm::Fit ? g.algorithms.front() : best.algorithm);
    p = proto.value_or(best.protocol);
  } else {
    a = *algo;
    p = *proto;
  }
  const PlanEntry* e = nullptr;
  for (std::size_t i = 0; i < g.algorithms.size(); ++i)
    if (g.algorithms[i] == a) e = g.plans[i].get();
  if (!e) {
    std::vector<std::string> names;
    for (auto x : g.algorithms) names.emplace_back(algorithm_name(x));
    throw Error(std::string("algorithm=") + algorithm_name(a) + " does not apply to " + op_name(op) +
                " on this group (" + std::to_string(g.shape.n) + " ranks on " +
                std::to_string(g.shape.nodes) + " nodes); valid: " + join(names));
  }
  if (a == Algorithm::NVLS && p != Protocol::Simple)
    throw Error("protocol: nvls runs the Simple protocol only");
  LoweredCollective l;
  l.plan = e->plan;
  for (const auto& c : e->costs) l.costs.push_back(&c);
  l.protocol = p;
  const bool inter = g.shape.nodes > 1;
  l.protocol_efficiency = profile_.step_efficiency(op, p, inter);
  const ProtoLatency& lat = profile_.lat(e->plan.latency_class, p);
  l.base_latency_s = std::max(0.0, lat.base_us + profile_.extra_latency_us(op, g.shape.n, inter)) * 1e-6;
  l.hop_latency_s_intra = lat.intra_hop_us * 1e-6;
  l.hop_latency_s_inter = lat.inter_hop_us * 1e-6;
  l.seconds = g.shape.n < 2 ? 0 : plan_seconds(g, *e, bytes, p, &l.phases);
  if (g.shape.n < 2) l.phases.clear();
  return l;
}

}  // namespace infraplan::coll
