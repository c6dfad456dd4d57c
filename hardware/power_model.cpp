#include "hardware/power_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/error.hpp"
#include "common/golden_section.hpp"

namespace infraplan::hw {
namespace {

constexpr int kParams = 6;
using Vec = std::array<double, kParams>;

PowerModel::Params to_params(const Vec& x) { return {x[0], x[1], x[2], x[3], x[5], x[4], x[1]}; }

/// Nelder–Mead on `f` from `x0` (deterministic: fixed start, steps and iteration count).
template <class F>
Vec nelder_mead(F&& f, Vec x0, int iters) {
  std::array<Vec, kParams + 1> pts;
  std::array<double, kParams + 1> val;
  pts[0] = x0;
  for (int i = 0; i < kParams; ++i) {
    pts[std::size_t(i + 1)] = x0;
    pts[std::size_t(i + 1)][std::size_t(i)] += 0.25 * (x0[std::size_t(i)] != 0 ? x0[std::size_t(i)] : 1.0);
  }
  for (std::size_t i = 0; i <= kParams; ++i) val[i] = f(pts[i]);
  for (int it = 0; it < iters; ++it) {
    std::array<std::size_t, kParams + 1> o;
    for (std::size_t i = 0; i <= kParams; ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return val[a] < val[b]; });
    auto sp = pts;
    auto sv = val;
    for (std::size_t i = 0; i <= kParams; ++i) pts[i] = sp[o[i]], val[i] = sv[o[i]];
    if (std::fabs(val[kParams] - val[0]) < 1e-12) break;
    Vec c{};
    for (std::size_t i = 0; i < kParams; ++i)
      for (std::size_t j = 0; j < kParams; ++j) c[j] += pts[i][j] / kParams;
    auto along = [&](double t) {
      Vec x;
      for (std::size_t j = 0; j < kParams; ++j) x[j] = c[j] + t * (pts[kParams][j] - c[j]);
      return x;
    };
    const Vec xr = along(-1);
    const double fr = f(xr);
    if (fr < val[0]) {
      const Vec xe = along(-2);
      const double fe = f(xe);
      if (fe < fr)
        pts[kParams] = xe, val[kParams] = fe;
      else
        pts[kParams] = xr, val[kParams] = fr;
    } else if (fr < val[kParams - 1]) {
      pts[kParams] = xr, val[kParams] = fr;
    } else {
      const Vec xc = along(0.5);
      const double fc = f(xc);
      if (fc < val[kParams]) {
        pts[kParams] = xc, val[kParams] = fc;
      } else {
        for (std::size_t i = 1; i <= kParams; ++i) {
          for (std::size_t j = 0; j < kParams; ++j) pts[i][j] = pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]);
          val[i] = f(pts[i]);
        }
      }
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i <= kParams; ++i)
    if (val[i] < val[best]) best = i;
  return pts[best];
}

double law(const PowerModel::Params& p, const PowerDemand& d, double ratio) {
  // Every term follows the SM clock. (Keeping the memory terms off the clock, as HBM has its own,
  // fits the same points as well and predicts the held-out mixtures and the corpus steps no better:
  // docs/calibration.md.)
  return p.base_w +
         (p.w_per_tflops16 * d.tflops16 + p.w_per_tflops8 * d.tflops8 +
          p.w_per_attn_tflops16 * d.attn_tflops16 + p.w_per_TBps * d.TBps + p.w_per_ew_TBps * d.ew_TBps) *
             std::pow(ratio, p.exponent);
}

/// The clock ratio f / fmax in (0, 1] at which the law meets `limit` (bisection; 1 under it).
double capped_ratio(const PowerModel::Params& p, const PowerDemand& d, double limit) {
  if (law(p, d, 1.0) <= limit) return 1.0;
  if (law(p, d, 0.05) >= limit) return 0.05;
  double lo = 0.05, hi = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (law(p, d, mid) > limit ? hi : lo) = mid;
  }
  return lo;
}

// A point counts as power-capped unless it kept (within this much) the top clock and drew less than
// the limit by this much.
constexpr double kTopClockSlackMhz = 40;
constexpr double kUnderLimitW = 15;
// The law takes a workload's average draw, which holds while its phases are short beside the power
// limiter's averaging time. Measured on the H200 (docs/data/calib/h200_power_probe.json): a heavy
// GEMM alternating with an idle GPU (60% of the time in the GEMM) slows its GEMM by 0.1%, 1.0%, 3.3%
// and 13% at periods of 4, 16, 64 and 256 ms, against 21% for the GEMM alone: the limiter follows
// phases of tens of ms and more. Mixtures with longer GEMM phases than this are not fitted.
constexpr double kMaxAveragedPhaseSeconds = 0.012;

}  // namespace

bool phase_is_averaged(const Profile::PowerPoint& p) { return p.period_s * p.gemm_share <= kMaxAveragedPhaseSeconds; }

PowerDemand burst_demand(const Profile::PowerPoint& p) {
  PowerDemand d;
  const double rate = 1e-12 / p.burst_seconds;
  (p.eight_bit ? d.tflops8 : p.attention ? d.attn_tflops16 : d.tflops16) = p.flops * rate;
  d.TBps = p.bytes * rate;
  d.ew_TBps = p.elementwise_bytes * rate;
  return d;
}

double PowerModel::residuals(const Params& p, const std::vector<const Profile::PowerPoint*>& points) const {
  // A capped point's clock (log ratio, weighted so that 1% of clock ~ 4 W) and an uncapped point's
  // power at the top clock.
  double sum = 0;
  for (const auto* q : points) {
    const PowerDemand d = burst_demand(*q);
    double r;
    if (q->clock_mhz > max_mhz_ - kTopClockSlackMhz && q->power_w < limit_w_ - kUnderLimitW)
      r = (law(p, d, 1.0) - q->power_w) / 20.0;
    else
      r = 20.0 * std::log(capped_ratio(p, d, limit_w_) * max_mhz_ / q->clock_mhz);
    sum += r * r;
  }
  return sum;
}

PowerModel::PowerModel(const Profile::PowerSection& s) : limit_w_(s.limit_w), max_mhz_(s.max_clock_mhz) {
  std::vector<const Profile::PowerPoint*> fit, attention_fit;
  bool capped = false;
  for (const auto& p : s.points)
    if (p.role == "fit" && p.attention) {
      attention_fit.push_back(&p);
    } else if (p.role == "fit" && phase_is_averaged(p)) {
      fit.push_back(&p);
      elementwise_ = elementwise_ || p.elementwise_bytes > 0;
      capped = capped || !(p.clock_mhz > max_mhz_ - kTopClockSlackMhz && p.power_w < limit_w_ - kUnderLimitW);
    }
  if (fit.size() < 3 || !capped)
    throw Error("profile power section: the power law needs at least 3 fit points, one of them power-capped (got " +
                std::to_string(fit.size()) + (capped ? ")" : ", none capped)"));
  // Residuals (residuals()); parameters stay physical (non-negative, γ in [0.3, 4]).
  auto objective = [&](const Vec& x) {
    for (double v : x)
      if (v < 0) return 1e12;
    if (x[4] < 0.3 || x[4] > 4) return 1e12;
    Params p = to_params(x);
    if (!elementwise_) p.w_per_ew_TBps = p.w_per_TBps;
    return residuals(p, fit);
  };
  Vec x{0.2 * limit_w_, 1.0, 0.6, 100.0, 1.5, 100.0};
  for (int restart = 0; restart < 3; ++restart) x = nelder_mead(objective, x, 3000);
  params_ = to_params(x);
  if (!elementwise_) params_.w_per_ew_TBps = params_.w_per_TBps;
  // The attention term, on the attention fit points alone with every other parameter held (so that
  // the GEMM, copy and elementwise points fit exactly as without them): golden-section search of ea
  // in [0, 4·e16] (the residual is unimodal in ea: the draw grows with it).
  if (!attention_fit.empty()) {
    attention_ = true;
    auto f = [&](double ea) {
      Params p = params_;
      p.w_per_attn_tflops16 = ea;
      return residuals(p, attention_fit);
    };
    params_.w_per_attn_tflops16 = golden_section_min(f, 0.0, 4 * std::max(params_.w_per_tflops16, 1e-3), 100);
  }
  // The checks compare the points with the law of their own operands.
  for (const auto& p : s.points)
    checks_.push_back(
        {p.label, p.role, p.clock_mhz, sustained_clock_mhz(burst_demand(p)), p.power_w, phase_is_averaged(p)});
  fitted_ = params_;
  if (s.gemm_operands == "uniform" && s.normal_operand_clock_ratio > 0) {
    operand_factor_ = std::pow(s.normal_operand_clock_ratio, -params_.exponent);
    params_.w_per_tflops16 *= operand_factor_;
    params_.w_per_tflops8 *= operand_factor_;
    if (!attention_) params_.w_per_attn_tflops16 = params_.w_per_tflops16;
  }
}

double PowerModel::power_w(const PowerDemand& d, double mhz) const {
  return law(params_, d, std::clamp(mhz / max_mhz_, 0.0, 1.0));
}

double PowerModel::sustained_clock_mhz(const PowerDemand& d) const {
  return capped_ratio(params_, d, limit_w_) * max_mhz_;
}

double PowerModel::max_clock_error(const std::string& role) const {
  double worst = 0;
  for (const auto& c : checks_)
    if (c.role == role && c.averaged) worst = std::max(worst, std::fabs(c.modelled_mhz / c.measured_mhz - 1));
  return worst;
}

}  // namespace infraplan::hw
