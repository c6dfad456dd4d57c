#include "calib_cluster/sweep_results.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "common/error.hpp"

namespace infraplan::ccal {

using coll::CollectiveOp;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Json records_to_json(const std::vector<PointRecord>& recs) {
  Json a = Json::array();
  for (const auto& r : recs) a.push_back({r.phase, r.group, r.rank, int(r.op), r.bytes, r.seconds});
  return a;
}

std::vector<PointRecord> records_from_json(const Json& j) {
  std::vector<PointRecord> out;
  for (const auto& e : j)
    out.push_back({e.at(0).get<int>(), e.at(1).get<int>(), e.at(2).get<int>(),
                   CollectiveOp(e.at(3).get<int>()), e.at(4).get<std::size_t>(), e.at(5).get<double>()});
  return out;
}

std::vector<SweepRow> aggregate_records(const std::vector<PointRecord>& records,
                                        const std::vector<SweepPhase>& phases) {
  // (phase, op, bytes, group) -> per-rank seconds
  std::map<std::tuple<int, int, std::size_t, int>, std::vector<double>> by_group;
  for (const auto& r : records) {
    if (r.phase < 0 || std::size_t(r.phase) >= phases.size())
      throw Error("rank " + std::to_string(r.rank) + " reported phase " + std::to_string(r.phase));
    by_group[{r.phase, int(r.op), r.bytes, r.group}].push_back(r.seconds);
  }
  std::map<std::tuple<int, int, std::size_t>, std::vector<double>> by_point;
  for (const auto& [k, v] : by_group) {
    const auto& ph = phases[std::size_t(std::get<0>(k))];
    if (int(v.size()) != ph.group_size)
      throw Error("phase " + ph.name + ", " + coll::op_name(CollectiveOp(std::get<1>(k))) + " of " +
                  std::to_string(std::get<2>(k)) + " B, group " + std::to_string(std::get<3>(k)) + ": " +
                  std::to_string(v.size()) + " of " + std::to_string(ph.group_size) + " ranks reported");
    double mean = 0;
    for (double x : v) mean += x;
    by_point[{std::get<0>(k), std::get<1>(k), std::get<2>(k)}].push_back(mean / double(v.size()));
  }
  std::vector<SweepRow> rows;
  for (const auto& [k, v] : by_point) {
    SweepRow r;
    r.phase = std::get<0>(k);
    r.op = CollectiveOp(std::get<1>(k));
    r.bytes = std::get<2>(k);
    r.seconds = median(v);
    r.seconds_min = *std::min_element(v.begin(), v.end());
    r.seconds_max = *std::max_element(v.begin(), v.end());
    r.groups = int(v.size());
    rows.push_back(r);
  }
  return rows;
}

Json rows_json(const std::vector<SweepRow>& rows, const std::vector<SweepPhase>& phases) {
  Json a = Json::array();
  for (const auto& r : rows) {
    const auto& ph = phases[std::size_t(r.phase)];
    const double algbw = coll::algbw_GBps(double(r.bytes), r.seconds);
    a.push_back({{"op", coll::op_name(r.op)},
                 {"phase", ph.name},
                 {"scope", ph.scope},
                 {"placement", ph.placement},
                 {"ranks", ph.group_size},
                 {"nodes", ph.nodes_per_group},
                 {"bytes", r.bytes},
                 {"time_us", r.seconds * 1e6},
                 {"time_us_min", r.seconds_min * 1e6},
                 {"time_us_max", r.seconds_max * 1e6},
                 {"groups", r.groups},
                 {"algbw_GBps", algbw},
                 {"busbw_GBps", algbw * coll::busbw_factor(r.op, ph.group_size)}});
  }
  return a;
}

Json group_fits_json(const std::vector<SweepRow>& rows, const std::vector<SweepPhase>& phases) {
  std::map<std::pair<int, int>, std::vector<const SweepRow*>> by;
  for (const auto& r : rows) by[{r.phase, int(r.op)}].push_back(&r);
  Json a = Json::array();
  for (const auto& [k, rs] : by) {
    const auto& ph = phases[std::size_t(k.first)];
    const CollectiveOp op = CollectiveOp(k.second);
    std::vector<double> small;
    const SweepRow* big = rs.front();
    for (const auto* r : rs) {
      if (r->bytes <= 4096) small.push_back(r->seconds);
      if (r->bytes > big->bytes) big = r;
    }
    const double lat = small.empty() ? 0 : median(small);
    const double f = coll::busbw_factor(op, ph.group_size);
    const double busbw = big->seconds > lat ? double(big->bytes) * f / (big->seconds - lat) / 1e9 : 0;
    double max_err = 0;
    for (const auto* r : rs) {
      const double t = lat + (busbw > 0 ? double(r->bytes) * f / (busbw * 1e9) : 0);
      max_err = std::max(max_err, std::fabs(t / r->seconds - 1));
    }
    a.push_back({{"op", coll::op_name(op)},
                 {"phase", ph.name},
                 {"scope", ph.scope},
                 {"placement", ph.placement},
                 {"ranks", ph.group_size},
                 {"nodes", ph.nodes_per_group},
                 {"latency_us", lat * 1e6},
                 {"bw_GBps", f > 0 ? busbw / f : 0},
                 {"busbw_GBps", busbw},
                 {"points", rs.size()},
                 {"max_rel_error", max_err}});
  }
  return a;
}

}  // namespace infraplan::ccal
