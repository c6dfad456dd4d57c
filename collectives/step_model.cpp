#include "collectives/step_model.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <unordered_map>

namespace infraplan::coll {

PatternCost pattern_cost(const net::Fabric& fabric, const FlowPattern& pattern) {
  PatternCost out;
  const std::size_t F = pattern.flows.size();
  if (F == 0) return out;
  // Compact link ids used by this pattern.
  std::unordered_map<int, int> local;
  std::vector<int> global;
  std::vector<std::vector<int>> routes(F);
  std::vector<double> lat(F, 0.0), remaining(F), finish(F, 0.0), rate(F, 0.0);
  std::vector<int> limit(F, -1);
  std::unordered_map<int, double> sent;
  std::vector<int> r;
  for (std::size_t f = 0; f < F; ++f) {
    const auto& fl = pattern.flows[f];
    r.clear();
    fabric.route(fl.src, fl.dst, r);
    for (int id : r) {
      auto [it, fresh] = local.emplace(id, int(global.size()));
      if (fresh) global.push_back(id);
      routes[f].push_back(it->second);
      lat[f] += fabric.link(id).latency_s;
    }
    remaining[f] = fl.wire;
    out.inter = out.inter || fl.inter;
    sent[fl.src] += fl.fraction;
  }
  for (auto& [src, frac] : sent) out.max_src_fraction = std::max(out.max_src_fraction, frac);
  const std::size_t L = global.size();
  std::vector<double> cap(L);
  std::vector<int> count(L);
  std::vector<char> active(F, 1), fixed(F);
  std::size_t left = F;
  double now = 0;
  for (std::size_t f = 0; f < F; ++f)
    if (routes[f].empty()) {  // same GPU: instantaneous
      active[f] = 0;
      --left;
    }
  // The flows crossing each link, in flow order, so that fixing a bottleneck visits only its
  // flows (the filling below is then O((flows × hops + links) log links) per round, not
  // flows × links: world-sized groups of tens of thousands of GPUs answer in seconds).
  std::vector<std::vector<int>> on_link(L);
  for (std::size_t f = 0; f < F; ++f)
    for (int l : routes[f]) on_link[std::size_t(l)].push_back(int(f));
  // Candidate bottlenecks by (share, link index): the same choice as scanning every link for the
  // smallest share, lowest index first. Entries go stale when a link's share changes; a fresh
  // one is pushed then, and stale ones are skipped when popped.
  using Candidate = std::pair<double, int>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  while (left > 0) {
    // Max-min rates by progressive filling.
    for (std::size_t l = 0; l < L; ++l) {
      cap[l] = fabric.link(global[l]).Bps;
      count[l] = 0;
    }
    for (std::size_t f = 0; f < F; ++f) {
      fixed[f] = !active[f];
      if (active[f])
        for (int l : routes[f]) count[std::size_t(l)]++;
    }
    heap = {};
    for (std::size_t l = 0; l < L; ++l)
      if (count[l] > 0) heap.push({cap[l] / count[l], int(l)});
    std::size_t unfixed = left;
    while (unfixed > 0 && !heap.empty()) {
      const auto [share, best] = heap.top();
      heap.pop();
      const std::size_t b = std::size_t(best);
      if (count[b] <= 0 || cap[b] / count[b] != share) continue;  // stale
      for (int fi : on_link[b]) {
        const std::size_t f = std::size_t(fi);
        if (fixed[f]) continue;
        fixed[f] = 1;
        --unfixed;
        rate[f] = share;
        limit[f] = global[b];
        for (int l : routes[f]) {
          cap[std::size_t(l)] -= share;
          count[std::size_t(l)]--;
        }
      }
      for (int fi : on_link[b])
        for (int l : routes[std::size_t(fi)])
          if (count[std::size_t(l)] > 0) heap.push({cap[std::size_t(l)] / count[std::size_t(l)], l});
    }
    // Advance to the next finish (flows within 1e-9 relative finish together).
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < F; ++f)
      if (active[f]) dt = std::min(dt, remaining[f] / rate[f]);
    now += dt;
    for (std::size_t f = 0; f < F; ++f) {
      if (!active[f]) continue;
      remaining[f] -= rate[f] * dt;
      if (remaining[f] <= 1e-9 * pattern.flows[f].wire) {
        active[f] = 0;
        finish[f] = now;
        --left;
      }
    }
  }
  // Pareto front of (latency, per-unit time); remember the slowest flow's limiting link.
  std::vector<std::size_t> idx(F);
  for (std::size_t f = 0; f < F; ++f) idx[f] = f;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return finish[a] != finish[b] ? finish[a] > finish[b] : lat[a] > lat[b];
  });
  double best_lat = -1;
  for (std::size_t f : idx) {
    out.max_latency_s = std::max(out.max_latency_s, lat[f]);
    if (lat[f] > best_lat) {
      out.terms.push_back({lat[f], finish[f]});
      best_lat = lat[f];
    }
  }
  const std::size_t slow = idx.front();
  out.bottleneck_link = limit[slow];
  if (out.bottleneck_link >= 0) out.bottleneck_Bps = fabric.link(out.bottleneck_link).Bps;
  return out;
}

}  // namespace infraplan::coll
