#include "collectives/comm_refit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "collectives/comm_model.hpp"
#include "common/error.hpp"

namespace infraplan::coll {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool spans_nodes(const hw::Cluster& c, const std::vector<int>& ranks) {
  for (int r : ranks)
    if (c.node_of(r) != c.node_of(ranks.front())) return true;
  return false;
}

void check_rows(const hw::Cluster& c, const std::vector<MeasuredCollective>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const std::string where = "measured row " + std::to_string(i) + " (" + op_name(r.op) + ")";
    if (r.ranks.size() < 2) throw Error(where + ": a group needs at least 2 ranks");
    std::set<int> seen;
    for (int k : r.ranks) {
      if (k < 0 || k >= c.total_gpus())
        throw Error(where + ": rank " + std::to_string(k) + " is outside the cluster (0.." +
                    std::to_string(c.total_gpus() - 1) + ")");
      if (!seen.insert(k).second) throw Error(where + ": rank " + std::to_string(k) + " repeats");
    }
    if (!(r.bytes > 0) || !(r.seconds > 0)) throw Error(where + ": bytes and seconds must be > 0");
  }
}

/// Sets the (op, protocol, scope) efficiency in `p`, replacing an earlier one.
void set_efficiency(CommProfile& p, CollectiveOp op, Protocol proto, bool inter, double eff) {
  for (auto& e : p.link_efficiency)
    if (e.op == op && e.protocol == proto && e.inter == inter) {
      e.efficiency = eff;
      return;
    }
  p.link_efficiency.push_back({op, proto, inter, eff});
}

double get_efficiency(const CommProfile& p, CollectiveOp op, Protocol proto, bool inter) {
  return p.step_efficiency(op, proto, inter) * (inter ? p.inter_bw_efficiency : p.intra_bw_efficiency);
}

/// Sum of |log(model / measured)| over `rows` with `p`.
double l1_log_error(const hw::Cluster& c, const CommProfile& p,
                    const std::vector<const MeasuredCollective*>& rows) {
  CommModel m(c, p);
  double s = 0;
  for (const auto* r : rows)
    s += std::fabs(std::log(m.estimate(r->op, r->bytes, r->ranks).seconds / r->seconds));
  return s;
}

/// Latency terms for (op, scope) from the latency-bound rows, per group size.
void fit_latency(const hw::Cluster& c, CommProfile& p, CollectiveOp op, bool inter,
                 const std::vector<const MeasuredCollective*>& small) {
  std::erase_if(p.latency_fits, [&](const LatencyFit& f) { return f.op == op && f.inter == inter; });
  std::map<int, std::vector<const MeasuredCollective*>> by_n;
  for (const auto* r : small) by_n[int(r->ranks.size())].push_back(r);
  CommModel m(c, p);  // without this op's latency terms
  std::vector<LatencyFit> fitted;
  for (const auto& [n, rs] : by_n) {
    std::vector<double> diff, meas;
    for (const auto* r : rs) {
      diff.push_back(r->seconds - m.estimate(r->op, r->bytes, r->ranks).seconds);
      meas.push_back(r->seconds);
    }
    fitted.push_back({op, inter, n, median(meas) * 1e6, median(diff) * 1e6});
  }
  p.latency_fits.insert(p.latency_fits.end(), fitted.begin(), fitted.end());
}

/// The efficiency of `proto` minimising the L1 log error over `rows` (log-spaced grid, then a
/// finer grid around the best point).
double fit_efficiency(const hw::Cluster& c, CommProfile p, CollectiveOp op, Protocol proto, bool inter,
                      const std::vector<const MeasuredCollective*>& rows, const RefitOptions& opt,
                      double max_efficiency) {
  const double lo = std::log(opt.min_efficiency), hi = std::log(std::max(opt.min_efficiency, max_efficiency));
  auto err = [&](double log_eff) {
    set_efficiency(p, op, proto, inter, std::exp(log_eff));
    return l1_log_error(c, p, rows);
  };
  // Start from the current value: where the calls do not constrain the protocol (the tuner never
  // picks it), the error is flat and the current value stays.
  const double current = std::clamp(std::log(get_efficiency(p, op, proto, inter)), lo, hi);
  double best_x = current, best_e = err(current) - 1e-12;
  const int coarse = 60;
  for (int i = 0; i <= coarse; ++i) {
    const double x = lo + (hi - lo) * i / coarse, e = err(x);
    if (e < best_e) best_e = e, best_x = x;
  }
  const double step = (hi - lo) / coarse;
  const int fine = 40;
  double fx = best_x;
  for (int i = -fine; i <= fine; ++i) {
    const double x = std::clamp(fx + step * i / fine, lo, hi), e = err(x);
    if (e < best_e) best_e = e, best_x = x;
  }
  return std::exp(best_x);
}

}  // namespace

std::vector<double> model_seconds(const hw::Cluster& cluster, const CommProfile& profile,
                                  const std::vector<MeasuredCollective>& rows) {
  check_rows(cluster, rows);
  CommModel m(cluster, profile);
  std::vector<double> out;
  for (const auto& r : rows) out.push_back(m.estimate(r.op, r.bytes, r.ranks).seconds);
  return out;
}

RefitResult refit_comm_profile(const hw::Cluster& cluster, const CommProfile& base,
                               const std::vector<MeasuredCollective>& rows, const RefitOptions& opt) {
  check_rows(cluster, rows);
  RefitResult res;
  res.profile = base;
  CommProfile& p = res.profile;
  p.fits.clear();  // the refitted model answers every group
  std::map<std::pair<int, bool>, std::vector<const MeasuredCollective*>> groups;
  for (const auto& r : rows) groups[{int(r.op), spans_nodes(cluster, r.ranks)}].push_back(&r);
  for (const auto& [key, rs] : groups) {
    const CollectiveOp op = CollectiveOp(key.first);
    const bool inter = key.second;
    std::vector<const MeasuredCollective*> small, mid, big;
    for (const auto* r : rs) {
      if (r->bytes <= opt.latency_bound_max_bytes)
        small.push_back(r);
      else if (r->bytes >= opt.bandwidth_bound_min_bytes)
        big.push_back(r);
      else
        mid.push_back(r);
    }
    RefitSummary sum;
    sum.op = op;
    sum.inter = inter;
    sum.points = int(rs.size());
    for (int round = 0; round < 2; ++round) {
      if (!small.empty()) fit_latency(cluster, p, op, inter, small);
      if (!big.empty()) {
        CommProfile simple_only = p;
        simple_only.protocol_enabled = {false, false, true};
        const double e =
            fit_efficiency(cluster, simple_only, op, Protocol::Simple, inter, big, opt, opt.max_efficiency);
        set_efficiency(p, op, Protocol::Simple, inter, e);
        sum.fitted[2] = true;
      }
      if (!mid.empty()) {
        for (Protocol proto : {Protocol::LL128, Protocol::LL}) {
          if (!p.protocol_enabled[std::size_t(proto)]) continue;
          // A protocol's wire format caps it below Simple on the same links (LL: 8 data bytes in
          // 16, LL128: 120 in 128): at most the default ratio to Simple of the fitted Simple.
          double cap = opt.max_efficiency;
          if (sum.fitted[2])
            cap = get_efficiency(p, op, Protocol::Simple, inter) *
                  base.protocol_efficiency[std::size_t(proto)] / base.protocol_efficiency[2];
          const double e = fit_efficiency(cluster, p, op, proto, inter, mid, opt, cap);
          set_efficiency(p, op, proto, inter, e);
          sum.fitted[int(proto)] = true;
        }
      }
    }
    // Protocols the calls did not constrain keep their default ratio to Simple.
    for (int k = 0; k < 3; ++k) {
      if (!sum.fitted[k] && sum.fitted[2]) {
        const double ratio = base.protocol_efficiency[std::size_t(k)] / base.protocol_efficiency[2];
        set_efficiency(p, op, Protocol(k), inter, get_efficiency(p, op, Protocol::Simple, inter) * ratio);
      }
      sum.efficiency[k] = get_efficiency(p, op, Protocol(k), inter);
    }
    CommModel m(cluster, p);
    std::vector<double> errs;
    for (const auto* r : rs)
      errs.push_back(std::fabs(m.estimate(r->op, r->bytes, r->ranks).seconds / r->seconds - 1));
    sum.median_abs_error = median(errs);
    res.summary.push_back(sum);
  }
  return res;
}

}  // namespace infraplan::coll
