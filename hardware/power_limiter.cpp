#include "hardware/power_limiter.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/golden_section.hpp"

namespace infraplan::hw {

PowerLimiter::PowerLimiter(double limit_w, double idle_w, double tau_s)
    : limit_w_(limit_w), idle_w_(idle_w), tau_(tau_s), avg_w_(idle_w) {
  if (!(limit_w > 0) || !(idle_w >= 0) || !(tau_s > 0) || !std::isfinite(limit_w + idle_w + tau_s))
    throw Error("power limiter: expected a positive limit and time constant and a non-negative idle draw");
}

void PowerLimiter::idle(double seconds) {
  if (seconds > 0) avg_w_ = idle_w_ + (avg_w_ - idle_w_) * std::exp(-seconds / tau_);
}

PowerLimiter::Run PowerLimiter::run(const Phase& p) {
  Run r;
  const double top = std::max(0.0, p.top_seconds), capped = std::max(top, p.capped_seconds);
  if (!(top > 0)) return r;
  if (p.top_power_w <= limit_w_) {  // never held back
    r.seconds = top;
    avg_w_ = p.top_power_w + (avg_w_ - p.top_power_w) * std::exp(-top / tau_);
    return r;
  }
  // P̄ climbs toward the top-clock draw; the clock drops once it reaches the limit.
  const double t1 = avg_w_ >= limit_w_ ? 0.0 : tau_ * std::log((p.top_power_w - avg_w_) / (p.top_power_w - limit_w_));
  if (t1 >= top) {
    r.seconds = top;
    avg_w_ = p.top_power_w + (avg_w_ - p.top_power_w) * std::exp(-top / tau_);
    return r;
  }
  r.top_fraction = t1 / top;
  r.seconds = t1 + (1.0 - r.top_fraction) * capped;
  avg_w_ = limit_w_;
  return r;
}

namespace {

const Profile::PowerPoint* find_point(const Profile::PowerSection& s, const std::string& label) {
  for (const auto& q : s.points)
    if (q.label == label) return &q;
  return nullptr;
}

/// The phase of a workload measured on its own, run for `top_seconds` at the top clock.
PowerLimiter::Phase alone_phase(const PowerModel& law, const Profile::PowerPoint& alone, double top_seconds) {
  const double draw = law.power_w(burst_demand(alone), law.max_clock_mhz());
  const double stretch = draw > law.limit_w() ? std::max(1.0, alone.sustained_seconds / alone.burst_seconds) : 1.0;
  return {draw, top_seconds, top_seconds * stretch};
}

/// Seconds per period of a mixture in its periodic steady state.
double mixture_period(double tau, double limit_w, double idle_w, const PowerLimiter::Phase& gemm,
                      const PowerLimiter::Phase* other, double other_idle_s) {
  PowerLimiter lim(limit_w, idle_w, tau);
  double period = 0, last_avg = -1;
  for (int cycle = 0; cycle < 4000; ++cycle) {
    period = lim.run(gemm).seconds;
    if (other)
      period += lim.run(*other).seconds;
    else
      lim.idle(other_idle_s), period += other_idle_s;
    if (std::fabs(lim.average_power_w() - last_avg) < 1e-9) break;
    last_avg = lim.average_power_w();
  }
  return period;
}

}  // namespace

std::optional<double> PowerLimiter::fit_time_constant(const PowerModel& law, const Profile::PowerSection& s,
                                                      std::vector<Check>* checks) {
  struct Mixture {
    const Profile::PowerPoint* p;
    Phase gemm, other;
    bool idle;
  };
  std::vector<Mixture> mixes;
  const double idle_w = s.idle_w > 0 ? s.idle_w : 0.15 * s.limit_w;
  for (const auto& q : s.points) {
    if (q.mix_with.empty() || !(q.gemm_phase_seconds > 0) || !(q.sustained_seconds > 0)) continue;
    const Profile::PowerPoint* g = find_point(s, q.gemm_label);
    if (!g) continue;
    Mixture m{&q, alone_phase(law, *g, q.gemm_phase_seconds), {}, q.mix_with == "idle"};
    if (!m.idle) {
      const Profile::PowerPoint* o = find_point(s, q.mix_with);
      if (!o) continue;
      m.other = alone_phase(law, *o, q.other_phase_seconds);
    }
    mixes.push_back(m);
  }
  auto period = [&](const Mixture& m, double tau) {
    return mixture_period(tau, s.limit_w, idle_w, m.gemm, m.idle ? nullptr : &m.other, m.p->other_phase_seconds);
  };
  int fit_points = 0;
  for (const auto& m : mixes) fit_points += m.idle && m.p->role == "fit";
  if (fit_points < 2) return std::nullopt;
  // Least squared log error of the period on the fit mixtures: a log-spaced grid from 1 ms to 4 s,
  // then golden-section search between the best grid point's neighbours.
  auto loss = [&](double log_tau) {
    double sum = 0;
    for (const auto& m : mixes)
      if (m.idle && m.p->role == "fit") {
        const double e = std::log(period(m, std::exp(log_tau)) / m.p->sustained_seconds);
        sum += e * e;
      }
    return sum;
  };
  const double lo = std::log(1e-3), hi = std::log(4.0);
  constexpr int kGrid = 48;
  int best_i = 0;
  double best = INFINITY;
  for (int i = 0; i <= kGrid; ++i) {
    const double v = loss(lo + (hi - lo) * i / kGrid);
    if (v < best) best = v, best_i = i;
  }
  const double a = lo + (hi - lo) * std::max(0, best_i - 1) / kGrid,
               b = lo + (hi - lo) * std::min(kGrid, best_i + 1) / kGrid;
  const double best_tau = std::exp(golden_section_min(loss, a, b, 30));
  if (checks) {
    checks->clear();
    for (const auto& m : mixes)
      checks->push_back({m.p->label, m.p->role == "fit" && m.idle ? "fit" : "holdout", m.p->sustained_seconds,
                         period(m, best_tau)});
  }
  return best_tau;
}

}  // namespace infraplan::hw
