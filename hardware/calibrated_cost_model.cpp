#include "hardware/calibrated_cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <utility>

#include "common/error.hpp"
#include "hardware/framework_costs.hpp"
#include "hardware/log_interpolation.hpp"
#include "hardware/roofline_cost_model.hpp"

namespace infraplan::hw {
namespace {

/// locate() with whole tiles of `q` elements: between two grid points the weight follows the tile
/// count ceil(x / q) rather than log x, so a size one element past a multiple of the tile costs as
/// the next tile count does (the kernel computes whole tiles). Grid points keep weight 0 or 1 (the
/// model stays exact on the grid); q ≤ 1, or both points within the same tile count, is locate().
Pos locate_tiles(const std::vector<double>& a, double x, double q) {
  Pos p = locate(a, x);
  if (q <= 1 || a.size() == 1 || !p.inside) return p;
  const double t0 = std::ceil(a[p.i0] / q), t1 = std::ceil(a[p.i1] / q);
  if (t1 <= t0) return p;
  p.w = std::clamp((std::ceil(p.clamped / q) - t0) / (t1 - t0), 0.0, 1.0);
  return p;
}

/// Trilinear interpolation of log seconds; NaN if a needed corner is unmeasured.
double gemm_interp(const GemmTable& t, const Pos& pm, const Pos& pn, const Pos& pk) {
  double acc = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        double w = (a ? pm.w : 1 - pm.w) * (b ? pn.w : 1 - pn.w) * (c ? pk.w : 1 - pk.w);
        if (w == 0) continue;
        double v = t.at(a ? pm.i1 : pm.i0, b ? pn.i1 : pn.i0, c ? pk.i1 : pk.i0);
        if (!(v > 0)) return NAN;
        acc += w * std::log(v);
      }
  return std::exp(acc);
}

GemmShape make_gemm(std::int64_t m, std::int64_t n, std::int64_t k, Dtype d) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.dtype = d;
  return s;
}

/// Largest power of two dividing x (x > 0), as a double.
double pow2_divisor(std::int64_t x) { return double(x & -x); }

/// Fit points shorter than this are launch-bound and left out of the off-grid factor (seconds).
constexpr double kMinFitSeconds = 10e-6;

/// True when n or k is not a multiple of 64 elements: off the grid's axes (all multiples of 64),
/// where cuBLASLt runs partial tiles and other kernels than at the grid's sizes.
bool off_grid(std::int64_t n, std::int64_t k) { return n % 64 != 0 || k % 64 != 0; }

/// Median of v (reorders v; v non-empty).
double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

/// The median exponent the power section's fit GEMMs of one width (`eight_bit`) measured between
/// their burst and held times (held clock at least 3% below the burst's); -1 without such a point.
double held_exponent(const Profile::PowerSection& power, bool eight_bit) {
  std::vector<double> b;
  for (const auto& q : power.points) {
    if (q.role != "fit" || q.eight_bit != eight_bit || q.label.rfind("gemm ", 0) != 0 ||
        !(q.burst_clock_mhz > 0) || !(q.clock_mhz < 0.97 * q.burst_clock_mhz))
      continue;
    const double e =
        std::log(q.sustained_seconds / q.burst_seconds) / std::log(q.burst_clock_mhz / q.clock_mhz);
    if (std::isfinite(e)) b.push_back(std::clamp(e, 0.0, 2.0));
  }
  return b.empty() ? -1.0 : median_of(b);
}

std::string fmt_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  std::ostringstream o;
  o << m << "x" << n << "x" << k;
  return o.str();
}

/// One misalignment ratio table [elements][m][nk] at (m, nk) for the class of `e` elements,
/// log-interpolated; when that class has no measurement there (no cuBLASLt algorithm for it) the
/// nearest class that has one (fewer doublings away; ties → the better-aligned one). NaN if none.
double misaligned_ratio(const GemmTable& t, const std::vector<double>& ratio, double m, double nk, double e,
                        double* used) {
  if (ratio.empty()) return NAN;
  Pos a = locate(t.mis_m, m), b = locate(t.mis_nk, nk);
  auto at_class = [&](std::size_t ei) {
    auto at = [&](std::size_t i, std::size_t j) {
      return ratio[(ei * t.mis_m.size() + i) * t.mis_nk.size() + j];
    };
    return lerp_log(lerp_log(at(a.i0, b.i0), at(a.i0, b.i1), b.w),
                    lerp_log(at(a.i1, b.i0), at(a.i1, b.i1), b.w), a.w);
  };
  std::vector<std::size_t> order(t.mis_elements.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto dist = [&](std::size_t i) { return std::fabs(std::log2(t.mis_elements[i]) - std::log2(e)); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (dist(x) != dist(y)) return dist(x) < dist(y);
    return t.mis_elements[x] > t.mis_elements[y];
  });
  for (std::size_t ei : order) {
    double r = at_class(ei);
    if (std::isfinite(r)) {
      if (used) *used = t.mis_elements[ei];
      return r;
    }
  }
  return NAN;
}

struct MisalignedFactor {
  double ratio = NAN;
  std::string what;
};

/// The slow-down of a GEMM whose n (multiple of `en` elements only) or k (`ek`) is not 16-byte
/// aligned (`emax` elements). Only one of them misaligned: that operand's own ratio when the
/// profile has it. Both: the both-misaligned ratio at the coarser class min(en, ek); where that
/// has no measurement, the larger of the two single-operand ratios. Profiles without the
/// single-operand ratios use the both-misaligned one for every case.
MisalignedFactor misaligned_factor(const GemmTable& t, double m, double n, double k, double en, double ek,
                                   double emax) {
  MisalignedFactor f;
  const double nk = std::sqrt(n * k);
  double used = 0;
  auto describe = [&](const char* which, bool both, double e_asked) {
    std::ostringstream d;
    d << which << (both ? " multiples" : " multiple") << " of " << e_asked << " element"
      << (e_asked == 1 ? "" : "s") << " only";
    if (used != e_asked) d << " (ratio of the " << used << "-element class)";
    return d.str();
  };
  const bool mn = en < emax, mk = ek < emax;
  if (mn != mk) {
    const std::vector<double>& single = mn ? t.mis_ratio_n : t.mis_ratio_k;
    const double e = mn ? en : ek;
    f.ratio = misaligned_ratio(t, single, m, nk, e, &used);
    if (std::isfinite(f.ratio)) {
      f.what = describe(mn ? "n" : "k", false, e);
      return f;
    }
  }
  const double e = std::min(en, ek);
  f.ratio = misaligned_ratio(t, t.mis_ratio, m, nk, e, &used);
  // The both-misaligned class measured has no algorithm at this e (cuBLASLt refuses it), yet this
  // shape's other operand is better aligned: the worse of the two single-operand slow-downs.
  if (mn && mk && used != e && !t.mis_ratio_n.empty() && !t.mis_ratio_k.empty()) {
    double un = 0, uk = 0;
    double rn = misaligned_ratio(t, t.mis_ratio_n, m, nk, en, &un),
           rk = misaligned_ratio(t, t.mis_ratio_k, m, nk, ek, &uk);
    if (std::isfinite(rn) || std::isfinite(rk)) {
      const bool take_n = std::isfinite(rn) && (!std::isfinite(rk) || rn >= rk);
      f.ratio = take_n ? rn : rk;
      used = take_n ? un : uk;
      std::ostringstream d;
      d << "n, k multiples of " << en << ", " << ek << " elements only: the " << (take_n ? "n" : "k")
        << "-misaligned ratio";
      f.what = d.str();
      return f;
    }
  }
  if (std::isfinite(f.ratio)) f.what = describe("n, k", true, e);
  return f;
}

}  // namespace

CalibratedCostModel::CalibratedCostModel(Profile profile, GpuSpec gpu)
    : profile_(std::move(profile)), gpu_(std::move(gpu)) {
  check_profile_gpu(profile_, gpu_.name, false);
  offgrid_factor_.assign(profile_.gemm.size(), 1.0);
  // Fit, per table and on its fit points only (held-out points are never used here), the tile
  // quanta and the off-grid factor together: for each candidate pair of quanta the factor is the
  // median measured ÷ interpolated ratio (in log) over the fit points whose n or k is not a
  // multiple of 64 elements; the pair kept is the one with the least median |log error| after the
  // factor (ties → the smaller quanta). Points shorter than 10 µs (launch-bound) are left out of
  // the factor. Quanta act between grid points only (locate_tiles), so every candidate keeps the
  // model exact on the grid.
  // The reference clock: the median of every GEMM cell's measured clock. Each table is referred to
  // it as t · (clock / reference)^β, with the exponent β fitted per table on its fit points together
  // with the quanta and the factor (each fit point referred by its own clock): β = 1 would be a
  // purely clock-bound kernel, 0 one that ignores the clock (memory-bound, or a reading that does not
  // reflect the clock during the samples).
  {
    std::vector<double> clocks;
    for (const auto& t : profile_.gemm)
      for (double c : t.clock_mhz)
        if (c > 0) clocks.push_back(c);
    reference_clock_mhz_ = clocks.empty() ? 0.0 : median_of(clocks);
  }
  clock_exponent_.assign(profile_.gemm.size(), 0.0);
  auto refer = [this](double seconds, double mhz, double beta) {
    return (mhz > 0 && reference_clock_mhz_ > 0) ? seconds * std::pow(mhz / reference_clock_mhz_, beta)
                                                 : seconds;
  };
  // The fastest HBM streaming each table measured, as timed (before the cells are referred to the
  // reference clock, which would credit a memory-bound cell with the SM clock): its cells whose
  // operands are far larger than the L2. A decode GEMM streaming a weight matrix is bound by it.
  stream_Bps_.assign(profile_.gemm.size(), 0.0);
  l2_bytes_ = gpu_.l2_bytes > 0 ? gpu_.l2_bytes : 64.0 * (1 << 20);
  for (std::size_t ti = 0; ti < profile_.gemm.size(); ++ti) {
    const GemmTable& t = profile_.gemm[ti];
    for (std::size_t i = 0; i < t.m.size(); ++i)
      for (std::size_t j = 0; j < t.n.size(); ++j)
        for (std::size_t l = 0; l < t.k.size(); ++l) {
          const double sec = t.at(i, j, l);
          if (!(sec > 0) || !std::isfinite(sec)) continue;
          const double bytes = gemm_min_bytes({std::int64_t(t.m[i]), std::int64_t(t.n[j]), std::int64_t(t.k[l]), t.dtype, 1});
          if (bytes >= 4.0 * l2_bytes_) stream_Bps_[ti] = std::max(stream_Bps_[ti], bytes / sec);
        }
  }
  // The fit points were timed with the tables, on their machine, in TN: fitted without the fleet
  // scale and timing correction (fleet_ is set below) and without layout ratios.
  for (std::size_t ti = 0; ti < profile_.gemm.size(); ++ti) {
    GemmTable& t = profile_.gemm[ti];
    if (t.fit_points.size() < 4) continue;
    const std::vector<double> raw = t.seconds;
    auto set_exponent = [&](double beta) {
      if (t.clock_mhz.size() != raw.size()) return;
      for (std::size_t c = 0; c < raw.size(); ++c) t.seconds[c] = refer(raw[c], t.clock_mhz[c], beta);
    };
    std::vector<double> betas{0.0};
    if (reference_clock_mhz_ > 0 && t.clock_mhz.size() == raw.size()) betas = {0.0, 0.25, 0.5, 0.75, 1.0};
    double best = INFINITY, bb = 0, bm = 1, bn = 1, bf = 1;
    std::vector<double> logr(t.fit_points.size()), off, err;
    for (double beta : betas) {
      set_exponent(beta);
      for (double qm : {1.0, 16.0, 32.0, 64.0, 128.0, 256.0})
        for (double qn : {1.0, 16.0, 32.0, 64.0, 128.0, 256.0}) {
          t.quantum_m = qm;
          t.quantum_n = qn;
          offgrid_factor_[ti] = 1.0;
          off.clear();
          for (std::size_t i = 0; i < t.fit_points.size(); ++i) {
            const auto& f = t.fit_points[i];
            GemmShape s = make_gemm(std::int64_t(f[0]), std::int64_t(f[1]), std::int64_t(f[2]), t.dtype);
            logr[i] = std::log(refer(f[3], f[4], beta) / gemm(s).seconds);
            if (f[3] >= kMinFitSeconds && off_grid(s.n, s.k)) off.push_back(logr[i]);
          }
          double lf = off.empty() ? 0.0 : median_of(off);
          err.clear();
          for (std::size_t i = 0; i < t.fit_points.size(); ++i) {
            const auto& f = t.fit_points[i];
            bool og = off_grid(std::int64_t(f[1]), std::int64_t(f[2]));
            err.push_back(std::fabs(logr[i] - (og ? lf : 0.0)));
          }
          double med = median_of(err);
          if (med < best - 1e-12) {
            best = med;
            bb = beta;
            bm = qm;
            bn = qn;
            bf = std::exp(lf);
          }
        }
    }
    set_exponent(bb);
    clock_exponent_[ti] = bb;
    t.quantum_m = bm;
    t.quantum_n = bn;
    offgrid_factor_[ti] = bf;
  }
  // Tables without clock readings (derived profiles) refer to the clock their source was referred
  // to, with the source's exponents ("gemm_clock").
  if (!(reference_clock_mhz_ > 0) && profile_.gemm_clock) {
    reference_clock_mhz_ = profile_.gemm_clock->reference_mhz;
    for (std::size_t ti = 0; ti < profile_.gemm.size(); ++ti) {
      auto it = profile_.gemm_clock->exponent.find(profile_.gemm[ti].dtype);
      clock_exponent_[ti] = it == profile_.gemm_clock->exponent.end() ? 0.0 : it->second;
    }
  }
  if (profile_.power && reference_clock_mhz_ > 0) {
    power_.emplace(*profile_.power);
    held_exponent16_ = held_exponent(*profile_.power, false);
    held_exponent8_ = held_exponent(*profile_.power, true);
    limiter_tau_s_ = PowerLimiter::fit_time_constant(*power_, *profile_.power, &limiter_checks_).value_or(0.0);
  }
  if (profile_.serving_attention && !profile_.serving_attention->prefill.empty())
    paged_.emplace(*profile_.serving_attention, profile_.sms, profile_.l2_bytes);
  fleet_ = true;
  // Exact workload shapes: each pass referred to the reference clock with its format's exponent,
  // then the median (as the held-out shapes are reported).
  for (const auto& h : profile_.gemm_exact)
    exact_[{int(h.dtype), int(h.layout), h.m, h.n, h.k}] = at_reference_clock(h);
  // Workload rows: graph-timed rows referred with their measured exponent where the profile has one.
  for (const auto& r : profile_.gemm_rows) {
    const bool nt = r.layout == GemmLayout::NT;
    auto& [tok, secs] = rows_[{int(r.dtype), int(r.layout), nt ? r.m : r.n, nt ? r.n : r.k}];
    const GemmTable* t = profile_.gemm_table(r.dtype);
    const double beta = r.graph_timed && t && t->rows_clock_exponent ? *t->rows_clock_exponent : -1.0;
    for (const auto& pt : r.points)
      tok.push_back(double(nt ? pt.k : pt.m)), secs.push_back(at_reference_clock(pt, beta));
  }
  // Rows timed held: as measured (each point the median of its starts' held times), with the clock
  // each held (the median of its readings).
  for (const auto& r : profile_.gemm_held_rows) {
    const bool nt = r.layout == GemmLayout::NT;
    HeldRow& h = held_rows_[{int(r.dtype), int(r.layout), nt ? r.m : r.n, nt ? r.n : r.k}];
    h.hold_ms = r.hold_ms;
    for (const auto& pt : r.points) {
      h.tok.push_back(double(nt ? pt.k : pt.m));
      h.seconds.push_back(pt.seconds);
      std::vector<double> c = pt.repeat_clock_mhz;
      h.clock_mhz.push_back(c.empty() ? 0.0 : median_of(c));
    }
  }
  // Attention query and key blocks: the pair with the least median |log error| of the forward
  // times on the prefill fit points (ties → the earlier, smaller pair; (1, 1) = exact causal
  // pairs, no tiles). Held-out shapes are not used.
  if (!profile_.prefill_fit_points.empty() && !profile_.prefill.empty()) {
    double best = INFINITY, bq = 1, bk = 1;
    std::vector<double> err;
    std::vector<std::pair<double, double>> cands{{1, 1}};
    for (double q : {16.0, 32.0, 64.0, 128.0, 256.0})
      for (double k : {16.0, 32.0, 64.0, 128.0, 256.0}) cands.emplace_back(q, k);
    for (auto [q, k] : cands) {
      block_q_ = q, block_k_ = k;
      err.clear();
      for (const auto& f : profile_.prefill_fit_points) {
        AttentionPrefillShape a;
        a.batch = f.batch, a.q_len = a.kv_len = f.seq_len, a.heads = f.heads, a.kv_heads = f.kv_heads;
        a.head_dim = f.head_dim, a.causal = f.causal;
        err.push_back(std::fabs(std::log(attention_prefill(a).seconds / f.seconds)));
      }
      double med = median_of(err);
      if (med < best - 1e-12) best = med, bq = q, bk = k;
    }
    block_q_ = bq, block_k_ = bk;
  }
}

namespace {

/// Σ_{i=0}^{n-1} floor((a·i + b) / m) in O(log) steps (the Euclid-like floor sum).
/// The caller keeps n ≤ 2^26, a, m ≤ 2^16 and b ≤ 2^40 so that nothing overflows.
std::uint64_t floor_sum(std::uint64_t n, std::uint64_t m, std::uint64_t a, std::uint64_t b) {
  std::uint64_t ans = 0;
  for (;;) {
    if (a >= m) {
      ans += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      ans += n * (b / m);
      b %= m;
    }
    const std::uint64_t y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return ans;
}

bool whole(double v) { return v == std::floor(v); }

}  // namespace

double CalibratedCostModel::tile_work(double q_len, double kv_len, bool causal) const {
  const double nq = std::ceil(q_len / block_q_), nk = std::ceil(kv_len / block_k_);
  if (!causal) return nq * block_q_ * nk * block_k_;
  const double prefix = kv_len - q_len;  // cached tokens every query sees
  if (block_q_ <= 1 && block_k_ <= 1) return q_len * (q_len + 1) / 2 + q_len * prefix;
  if (!(nq >= 1)) return 0;
  // Query block i sees keys up to prefix + (i + 1)·bq: whole key blocks up to there. The last
  // block sees all nk key blocks; block i < nq − 1 sees ceil((prefix + (i + 1)·bq) / bk) ≤ nk.
  // The sum of those ceilings is a floor sum: constant work however long the sequence.
  if (nq <= double(1 << 26) && kv_len <= double(std::int64_t(1) << 36) && prefix >= 0 && whole(prefix) &&
      whole(block_q_) && whole(block_k_) && block_q_ <= 65536 && block_k_ <= 65536) {
    const auto bq = std::uint64_t(block_q_), bk = std::uint64_t(block_k_);
    // ceil(y / bk) = floor((y + bk − 1) / bk) with y = prefix + bq + i·bq.
    const double tiles =
        nk + double(floor_sum(std::uint64_t(nq) - 1, bk, bq, std::uint64_t(prefix) + bq + bk - 1));
    return tiles * block_q_ * block_k_;
  }
  if (nq <= double(1 << 20)) {  // unusual (fractional or negative) sizes: the sum itself
    double tiles = 0;
    for (double i = 0; i < nq; ++i)
      tiles += std::min(nk, std::ceil(std::min(kv_len, prefix + (i + 1) * block_q_) / block_k_));
    return tiles * block_q_ * block_k_;
  }
  // Beyond any real sequence: the continuous area, within one tile per query block.
  return q_len * (q_len + 1) / 2 + q_len * prefix;
}

double CalibratedCostModel::clock_exponent(Dtype d) const {
  const GemmTable* t = profile_.gemm_table(d);
  return t ? clock_exponent_[std::size_t(t - profile_.gemm.data())] : 0.0;
}

double CalibratedCostModel::memory_clock_factor(double clock_share) const {
  return power_ ? clock_share_factor(clock_share, power_->max_clock_mhz(), reference_clock_mhz_) : 1.0;
}

double CalibratedCostModel::clock_factor(Dtype d, double mhz) const {
  if (!(mhz > 0) || !(reference_clock_mhz_ > 0)) return 1.0;
  return std::pow(mhz / reference_clock_mhz_, clock_exponent(d));
}

double CalibratedCostModel::held_clock_exponent(Dtype d) const {
  const double b = d == Dtype::FP8 || d == Dtype::INT8 ? held_exponent8_ : held_exponent16_;
  return b >= 0 ? b : clock_exponent(d);
}

double CalibratedCostModel::held_clock_factor(Dtype d, double mhz) const {
  if (!(mhz > 0) || !(reference_clock_mhz_ > 0)) return 1.0;
  return std::pow(mhz / reference_clock_mhz_, held_clock_exponent(d));
}

std::optional<CalibratedCostModel::HeldGemm> CalibratedCostModel::gemm_held_measured(
    const GemmShape& s) const {
  if (s.batch != 1) return std::nullopt;
  const bool nt = s.layout == GemmLayout::NT;
  auto it = held_rows_.find({int(s.dtype), int(s.layout), nt ? s.m : s.n, nt ? s.n : s.k});
  if (it == held_rows_.end()) return std::nullopt;
  const HeldRow& r = it->second;
  const Pos p = locate(r.tok, double(nt ? s.k : s.m));
  if (!p.inside) return std::nullopt;
  HeldGemm h;
  h.seconds = lerp_log(r.seconds[p.i0], r.seconds[p.i1], p.w);
  if (r.clock_mhz[p.i0] > 0 && r.clock_mhz[p.i1] > 0)
    h.clock_mhz = r.clock_mhz[p.i0] + p.w * (r.clock_mhz[p.i1] - r.clock_mhz[p.i0]);
  h.hold_ms = r.hold_ms;
  return h;
}

CalibratedCostModel::HeldGemm CalibratedCostModel::gemm_held(const GemmShape& s, double duty) const {
  if (duty == 1.0)
    if (auto row = gemm_held_measured(s)) return *row;
  HeldGemm h;
  h.clock_mhz = gemm_held_clock_mhz(s, duty);
  h.seconds = gemm(s).seconds / held_clock_factor(s.dtype, h.clock_mhz);
  return h;
}

double CalibratedCostModel::gemm_held_clock_mhz(const GemmShape& s, double duty) const {
  if (!(duty > 0 && duty <= 1)) throw Error("GEMM duty must be in (0, 1], got " + std::to_string(duty));
  if (!power_ || !(reference_clock_mhz_ > 0)) return 0.0;
  const double top_mhz = power_->max_clock_mhz();
  const double top_s = gemm(s).seconds / held_clock_factor(s.dtype, top_mhz);
  if (!(top_s > 0)) return top_mhz;
  const bool eight_bit = s.dtype == Dtype::FP8 || s.dtype == Dtype::INT8;  // their own energy per operation
  const double in = dtype_bytes(s.dtype), out = eight_bit ? 2.0 : in;      // 8-bit GEMMs write bf16
  const double batch = double(s.batch), m = double(s.m), n = double(s.n), k = double(s.k);
  const double tflops = duty * 2.0 * batch * m * n * k / top_s * 1e-12;
  PowerDemand d;
  if (eight_bit)
    d.tflops8 = tflops;
  else
    d.tflops16 = tflops;
  d.TBps = duty * batch * (m * k * in + n * k * in + m * n * out) / top_s * 1e-12;
  return std::min(top_mhz, power_->sustained_clock_mhz(d));
}

double CalibratedCostModel::gemm_stream_Bps(Dtype d) const {
  const GemmTable* t = profile_.gemm_table(d);
  return t ? stream_Bps_[std::size_t(t - profile_.gemm.data())] : 0.0;
}

double CalibratedCostModel::at_reference_clock(const HoldoutGemm& h, double beta) const {
  if (h.repeats.empty() || h.repeat_clock_mhz.size() != h.repeats.size()) return h.seconds;
  const double b = beta >= 0 ? beta : clock_exponent(h.dtype);
  std::vector<double> v;
  for (std::size_t i = 0; i < h.repeats.size(); ++i) {
    const double mhz = h.repeat_clock_mhz[i];
    v.push_back(h.repeats[i] *
                (mhz > 0 && reference_clock_mhz_ > 0 ? std::pow(mhz / reference_clock_mhz_, b) : 1.0));
  }
  return median_of(v);
}

double CalibratedCostModel::offgrid_factor(Dtype d) const {
  const GemmTable* t = profile_.gemm_table(d);
  return t ? offgrid_factor_[std::size_t(t - profile_.gemm.data())] : 1.0;
}

CostEstimate CalibratedCostModel::gemm(const GemmShape& s) const { return gemm_impl(s, true, true); }

CostEstimate CalibratedCostModel::gemm_from_tables(const GemmShape& s, bool as_tabled) const {
  return gemm_impl(s, false, true, !as_tabled);
}

CostEstimate CalibratedCostModel::gemm_as_tabled(const GemmShape& s) const { return gemm_impl(s, true, true, false); }

CostEstimate CalibratedCostModel::gemm_from_grid(const GemmShape& s) const { return gemm_impl(s, false, false); }

double CalibratedCostModel::layout_ratio(const GemmShape& s, std::string* detail) const {
  if (s.layout == GemmLayout::TN) return 1.0;
  const GemmTable* own = profile_.gemm_table(s.dtype);
  const bool tn_only = s.dtype == Dtype::FP8 || s.dtype == Dtype::INT8;
  const GemmTable* t = own && own->layouts ? own : profile_.gemm_table(Dtype::BF16);
  if (tn_only || !t || !t->layouts) {
    if (detail)
      *detail = tn_only ? "; " + std::string(dtype_name(s.dtype)) + " runs in TN on Hopper (no layout ratio)"
                        : "; no layout table: as TN";
    return 1.0;
  }
  const LayoutRatioTable& lt = *t->layouts;
  const std::vector<double>& r = s.layout == GemmLayout::NN ? lt.nn : lt.nt;
  // Log-trilinear in (m, n, k), clamped to the sub-grid; an unmeasured corner drops out (weights
  // renormalised), none measured → 1.
  Pos pm = locate(lt.m, double(s.m)), pn = locate(lt.n, double(s.n)), pk = locate(lt.k, double(s.k));
  double acc = 0, wsum = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        double w = (a ? pm.w : 1 - pm.w) * (b ? pn.w : 1 - pn.w) * (c ? pk.w : 1 - pk.w);
        if (w == 0) continue;
        double v = lt.at(r, a ? pm.i1 : pm.i0, b ? pn.i1 : pn.i0, c ? pk.i1 : pk.i0);
        if (!(v > 0)) continue;
        acc += w * std::log(v);
        wsum += w;
      }
  const double ratio = wsum > 0 ? std::exp(acc / wsum) : 1.0;
  if (detail) {
    std::ostringstream d;
    d.precision(3);
    d << "; layout " << gemm_layout_name(s.layout) << ": ×" << ratio << " of TN ("
      << (t == own ? "" : std::string(dtype_name(t->dtype)) + " ") << "layout table"
      << (pm.inside && pn.inside && pk.inside ? "" : ", clamped to its range") << ")";
    *detail = d.str();
  }
  return ratio;
}

double CalibratedCostModel::timing_ratio(double seconds) const {
  if (!profile_.gemm_timing || !(seconds > 0)) return 1.0;
  const auto& tc = *profile_.gemm_timing;
  Pos p = locate(tc.seconds, seconds);
  return lerp_log(tc.ratio[p.i0], tc.ratio[p.i1], p.w);
}

CostEstimate CalibratedCostModel::gemm_impl(const GemmShape& s, bool use_exact, bool use_rows, bool use_fleet) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) throw Error("gemm: m, n, k and batch must be > 0");
  if (!gpu_.supports(s.dtype) && s.dtype != Dtype::INT4)
    throw Error(gpu_.name + " has no tensor-core support for " + std::string(dtype_name(s.dtype)) + " GEMMs");
  const double bw = profile_.ceilings.copy_GBps * 1e9;
  const GemmTable* t = profile_.gemm_table(s.dtype);
  std::string detail;
  double ceiling = 0;
  if (t) {
    ceiling = profile_.ceilings.gemm_TFLOPs.at(s.dtype) * 1e12;
  } else {
    // No table for this format: the bf16 table's efficiency on this format's roofline, its
    // ceiling scaled from bf16 by the datasheet ratio.
    t = profile_.gemm_table(Dtype::BF16);
    if (!t)
      throw Error("profile " + profile_.origin + " has no GEMM table for " +
                  std::string(dtype_name(s.dtype)) + " or bf16");
    double peak_d = gpu_.peak(s.dtype).value_or(*gpu_.peak(Dtype::FP16));
    ceiling = profile_.ceilings.gemm_TFLOPs.at(Dtype::BF16) * 1e12 * peak_d / *gpu_.peak(Dtype::BF16);
    detail = "no " + std::string(dtype_name(s.dtype)) + " table: bf16 efficiency on the " +
             std::string(dtype_name(s.dtype)) + " roofline; ";
  }
  // A workload's own measurements: the exact shape, else its (n, k) row interpolated in m (by
  // whole tiles of the table's m quantum), with no grid and no alignment corrections (they ran at
  // this n and k).
  auto measured = [&](double one_seconds, std::string what) {
    CostEstimate x;
    x.seconds = one_seconds * double(s.batch);
    x.achieved = s.flops() / x.seconds;
    x.ceiling = ceiling;
    x.source = CostSource::Measured;
    x.detail = std::string(dtype_name(s.dtype)) + " " + what;
    if (reference_clock_mhz_ > 0)
      x.detail += " at the reference clock " + std::to_string(std::lround(reference_clock_mhz_)) + " MHz";
    return x;
  };
  const std::string lname = gemm_layout_name(s.layout);
  if (t->dtype == s.dtype) {
    if (use_exact) {
      auto hit = exact_.find({int(s.dtype), int(s.layout), s.m, s.n, s.k});
      if (hit != exact_.end())
        return measured(hit->second, lname + " exact shape measured (tables.gemm_shapes)");
    }
    // A row runs along the token axis: m for TN / NN (fixed n, k), k for NT (fixed m, n).
    const bool nt = s.layout == GemmLayout::NT;
    auto row = use_rows ? rows_.find({int(s.dtype), int(s.layout), nt ? s.m : s.n, nt ? s.n : s.k}) : rows_.end();
    if (row != rows_.end()) {
      const auto& [tok, secs] = row->second;
      Pos p = nt ? locate(tok, double(s.k)) : locate_tiles(tok, double(s.m), t->quantum_m);
      if (p.inside)
        return measured(lerp_log(secs[p.i0], secs[p.i1], p.w),
                        lname + " row " +
                            (nt ? "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " measured over k"
                                : "n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) + " measured over m") +
                            " (tables.gemm_rows), log-space interpolation");
    }
  }
  GemmShape one = s;
  one.batch = 1;
  // Output tiles: between grid points, m and n weigh by whole tiles of the fitted quanta.
  Pos pm = locate_tiles(t->m, double(s.m), t->quantum_m), pn = locate_tiles(t->n, double(s.n), t->quantum_n),
      pk = locate(t->k, double(s.k));
  bool own_table = t->dtype == s.dtype;
  double secs = NAN;
  CostEstimate e;
  if (own_table && pm.inside && pn.inside && pk.inside) secs = gemm_interp(*t, pm, pn, pk);
  if (std::isfinite(secs)) {
    e.source = CostSource::Measured;
    detail += std::string(dtype_name(s.dtype)) + " table, log-space interpolation";
    if (reference_clock_mhz_ > 0) {
      std::ostringstream d;
      d << " at the reference clock " << std::lround(reference_clock_mhz_) << " MHz";
      detail += d.str();
    }
  } else {
    // Nearest point of the table (clamped), its efficiency against the table format's roofline.
    GemmShape c = one;
    c.m = std::int64_t(std::llround(pm.clamped));
    c.n = std::int64_t(std::llround(pn.clamped));
    c.k = std::int64_t(std::llround(pk.clamped));
    c.dtype = t->dtype;
    double tc = gemm_interp(*t, pm, pn, pk);
    if (!std::isfinite(tc))
      throw Error("profile " + profile_.origin + ": GEMM table has unmeasured cells near " +
                  fmt_shape(c.m, c.n, c.k));
    double c_ceiling = profile_.ceilings.gemm_TFLOPs.at(t->dtype) * 1e12;
    double roof_c = std::max(c.flops() / c_ceiling, gemm_min_bytes(c) / bw);
    double eff = roof_c / tc;
    double roof = std::max(one.flops() / ceiling, gemm_min_bytes(one) / bw);
    secs = std::max(roof / eff, launch_overhead_seconds());
    e.source = CostSource::Extrapolated;
    std::ostringstream d;
    d.precision(3);
    d << "roofline × efficiency " << eff << " of table point " << fmt_shape(c.m, c.n, c.k);
    detail += d.str();
  }
  // n and k that are multiples of only a few elements run other kernels: the measured ratio.
  // Alignment is that of the leading dimensions the operands are read with: TN (forward) and NN
  // (input gradient) read A with ld = k and B, C with ld = n; NT (weight gradient dW = dYᵀ·X, m the
  // weight's rows) reads dY with ld = m. GPT-2's 50257-wide head: its weight gradient runs the
  // misaligned kernels although its k (tokens) is aligned.
  const std::int64_t a_ld = s.layout == GemmLayout::NT ? s.m : s.k;
  const double emax = 16.0 / dtype_bytes(s.dtype);
  const double e_al = std::min({pow2_divisor(s.n), pow2_divisor(a_ld), emax});
  if (own_table && e_al >= emax && off_grid(s.n, s.k)) {
    // Rows 16-byte aligned but off the grid's multiples of 64: the factor fitted on fit points.
    double f = offgrid_factor_[std::size_t(t - profile_.gemm.data())];
    if (f != 1.0) {
      secs *= f;
      std::ostringstream d;
      d.precision(3);
      d << "; off-grid n, k: ×" << f;
      detail += d.str();
    }
  }
  if (own_table && !t->mis_elements.empty()) {
    const double en = std::min(pow2_divisor(s.n), emax), ek = std::min(pow2_divisor(a_ld), emax);
    if (e_al < emax) {
      const MisalignedFactor f = misaligned_factor(*t, double(s.m), double(s.n), double(s.k), en, ek, emax);
      if (std::isfinite(f.ratio)) {
        secs *= f.ratio;
        std::ostringstream d;
        d.precision(3);
        d << "; " << f.what << ": ×" << f.ratio;
        detail += d.str();
      } else {
        detail += "; misaligned n, k: no measured ratio (no cuBLASLt algorithm in the calibration)";
      }
    }
  }
  // The tables are TN: the backward layouts take their measured ratio; every table prediction the
  // fleet scale of its table (the median machine of the calibration runs against the table's own).
  std::string ldetail;
  secs *= layout_ratio(s, &ldetail);
  detail += ldetail;
  if (fleet_ && use_fleet && (profile_.gemm_timing || t->fleet_scale != 1.0)) {
    const double tr = timing_ratio(secs);
    secs *= tr * t->fleet_scale;
    std::ostringstream d;
    d.precision(3);
    d << "; fleet: timing ×" << tr << ", machines ×" << t->fleet_scale;
    // Operands larger than the L2 stream from HBM: no correction makes them move faster than the
    // table's fastest measured streaming.
    const double rate = stream_Bps_[std::size_t(t - profile_.gemm.data())];
    GemmShape single = s;
    single.batch = 1;
    const double bytes = gemm_min_bytes(single);
    if (rate > 0 && bytes >= l2_bytes_ && secs < bytes / rate) {
      secs = bytes / rate;
      d << " (held at the table's fastest HBM streaming, " << std::lround(rate / 1e9) << " GB/s)";
    }
    detail += d.str();
  }
  e.seconds = secs * double(s.batch);
  e.achieved = s.flops() / e.seconds;
  e.ceiling = ceiling;
  e.detail = detail;
  return e;
}

CostEstimate CalibratedCostModel::attention_prefill(const AttentionPrefillShape& s) const {
  if (s.batch <= 0 || s.q_len <= 0 || s.kv_len < s.q_len || s.heads <= 0 || s.kv_heads <= 0 ||
      s.head_dim <= 0)
    throw Error("attention_prefill: need batch, q_len, heads, kv_heads, head_dim > 0 and kv_len >= q_len");
  const PrefillTable* t = profile_.prefill_table(int(s.head_dim), s.kernel);
  if (!t) throw Error("profile " + profile_.origin + " has no attention_prefill table");
  const bool own_kernel = s.kernel == AttentionKernel::Default || profile_.has_prefill_kernel(s.kernel);
  // Achieved FLOP/s of the table at (seq_len, batch): interpolated along batch inside each
  // seq_len row (over its measured prefix), then along seq_len.
  // Work in score-tile elements: FlashAttention-style kernels compute whole (query block × key
  // block) tiles, so the rate measured on the table is per tile element and a shape costs its own
  // tile count (blocks fitted on the profile's fit points).
  auto table_flops = [&](std::size_t i, std::size_t j) {
    double S = t->seq_len[i], b = t->batch[j];
    return 4.0 * b * t->heads * tile_work(S, S, t->causal) * t->head_dim;
  };
  const double S = double(s.q_len);
  const double b = double(s.batch) * double(s.heads) / double(t->heads);
  const double work =
      4.0 * double(s.batch) * double(s.heads) * tile_work(S, double(s.kv_len), s.causal) * double(s.head_dim);
  Pos ps = locate(t->seq_len, S);
  bool inside = ps.inside && t->head_dim == s.head_dim;
  auto row_rate = [&](std::size_t i) {
    std::size_t last = 0;
    while (last + 1 < t->batch.size() && std::isfinite(t->at(i, last + 1))) ++last;
    std::vector<double> ax(t->batch.begin(), t->batch.begin() + std::ptrdiff_t(last + 1));
    Pos pb = locate(ax, b);
    inside = inside && pb.inside;
    double r0 = table_flops(i, pb.i0) / t->at(i, pb.i0), r1 = table_flops(i, pb.i1) / t->at(i, pb.i1);
    return lerp_log(r0, r1, pb.w);
  };
  double r0 = row_rate(ps.i0);
  double r1 = row_rate(ps.i1);
  // Between two table lengths the rate moves with the tile work, not the length: tile counts step
  // at block boundaries, and a length-weighted rate would make time fall across a step.
  double w = ps.w;
  if (ps.i0 != ps.i1 && w > 0 && w < 1) {
    const double w0 = tile_work(t->seq_len[ps.i0], t->seq_len[ps.i0], t->causal);
    const double w1 = tile_work(t->seq_len[ps.i1], t->seq_len[ps.i1], t->causal);
    const double ws = tile_work(S, S, t->causal);
    w = std::clamp(std::log(ws / w0) / std::log(w1 / w0), 0.0, 1.0);
  }
  double rate = lerp_log(r0, r1, w);
  CostEstimate e;
  e.seconds = std::max(work / rate, inside ? 0.0 : launch_overhead_seconds());
  e.achieved = s.flops() / e.seconds;
  e.ceiling = profile_.ceilings.gemm_TFLOPs.count(Dtype::BF16)
                  ? profile_.ceilings.gemm_TFLOPs.at(Dtype::BF16) * 1e12
                  : 0;
  e.source = inside ? CostSource::Measured : CostSource::Extrapolated;
  std::ostringstream d;
  d << (s.kernel == AttentionKernel::Flash2 ? (own_kernel ? "flash2 " : "flash2 not measured: default ") : "")
    << "prefill table d" << t->head_dim << (t->causal ? " causal" : "") << ", "
    << (inside ? "interpolated" : "nearest table point's FLOP/s")
    << (s.causal == t->causal ? "" : " (mask differs)");
  e.detail = d.str();
  return e;
}

CostEstimate CalibratedCostModel::attention_decode(const AttentionDecodeShape& s) const {
  if (s.batch <= 0 || s.total_context_tokens < 0 || s.heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0)
    throw Error("attention_decode: need batch, heads, kv_heads, head_dim > 0 and total_context_tokens >= 0");
  if (!profile_.decode) throw Error("profile " + profile_.origin + " has no attention_decode table");
  const DecodeTable& t = *profile_.decode;
  double bytes_per_token = double(s.kv_heads) * double(s.head_dim) * dtype_bytes(s.kv_dtype);
  double table_bytes_per_token = double(t.kv_heads) * t.head_dim * dtype_bytes(t.kv_dtype);
  // Context per sequence expressed in the table's KV bytes per token.
  double ctx = std::max(
      1.0, double(s.total_context_tokens) / double(s.batch) * bytes_per_token / table_bytes_per_token);
  Pos pb = locate(t.batch, double(s.batch)), pc = locate(t.context, ctx);
  auto cell = [&](std::size_t i, std::size_t j) { return t.at(i, j); };
  double t00 = cell(pb.i0, pc.i0), t01 = cell(pb.i0, pc.i1), t10 = cell(pb.i1, pc.i0),
         t11 = cell(pb.i1, pc.i1);
  double tin = lerp_log(lerp_log(t00, t01, pc.w), lerp_log(t10, t11, pc.w), pb.w);
  CostEstimate e;
  double bytes = s.kv_bytes();
  if (pb.inside && pc.inside) {
    e.seconds = tin;
    e.source = CostSource::Measured;
    e.detail = "decode table, log-space interpolation";
  } else {
    // Efficiency of the clamped table point against the copy ceiling, on this shape's bytes.
    double bytes_c = 2.0 * pb.clamped * pc.clamped * table_bytes_per_token;
    double eff = bytes_c / (profile_.ceilings.copy_GBps * 1e9) / tin;
    e.seconds =
        std::max(bytes / (profile_.ceilings.copy_GBps * 1e9) / eff, tin * std::min(1.0, bytes / bytes_c));
    e.seconds = std::max(e.seconds, launch_overhead_seconds());
    e.source = CostSource::Extrapolated;
    e.detail = "decode: bandwidth efficiency of the nearest table point";
  }
  // The engine's own kernel as a step runs it (serving_attention's grid), where measured.
  if (paged_ && s.engine_kernel && s.batch > 0) {
    const double per_seq = double(s.total_context_tokens) / double(s.batch),
                 padding = double(std::max<std::int64_t>(0, s.tile_padding_tokens)) / double(s.batch);
    if (auto g = paged_->decode_seconds(double(s.batch), paged_->decode_context(per_seq, padding), s.heads,
                                        s.kv_heads)) {
      e.seconds = *g;
      e.source = CostSource::Measured;
      e.detail = "engine decode kernel (serving_attention grid), log-space interpolation";
    }
  }
  // Prefix sharing: blocks several sequences read come from HBM once (serving_attention's ρ).
  if (paged_ && s.unique_context_tokens >= 0 && s.unique_context_tokens < s.total_context_tokens &&
      s.total_context_tokens > 0) {
    e.seconds *= paged_->decode_share_factor(double(s.unique_context_tokens) / double(s.total_context_tokens));
    e.detail += "; shared prefix blocks read once (serving_attention)";
  }
  e.achieved = bytes / e.seconds;
  e.ceiling = profile_.ceilings.copy_GBps * 1e9;
  return e;
}

std::optional<CostEstimate> CalibratedCostModel::attention_prefill_launch(const AttentionPrefillLaunch& l) const {
  if (!paged_ || l.head_dim != 128 || l.dtype != Dtype::BF16 || l.chunks.empty() || l.heads <= 0) return std::nullopt;
  CostEstimate e;
  e.seconds = std::max(paged_->prefill_launch_seconds(l.chunks, l.heads, l.kv_heads), 1e-7);
  double flops = 0;
  for (const auto& [q, cached] : l.chunks) {
    AttentionPrefillShape p{1, q, q + cached, l.heads, l.kv_heads, l.head_dim, true, l.dtype};
    flops += p.flops();
  }
  e.achieved = flops / e.seconds;
  e.ceiling = profile_.ceilings.gemm_TFLOPs.count(Dtype::BF16) ? profile_.ceilings.gemm_TFLOPs.at(Dtype::BF16) * 1e12 : 0;
  e.source = CostSource::Measured;
  e.detail = "paged prefill launch model (serving_attention): " + std::to_string(l.chunks.size()) + " chunk(s)";
  return e;
}

CostEstimate CalibratedCostModel::memory_bound(double bytes) const {
  if (!(bytes >= 0)) throw Error("memory_bound: bytes must be >= 0");
  const MemoryTable& t = profile_.memory;
  CostEstimate e;
  e.ceiling = profile_.ceilings.copy_GBps * 1e9;
  if (bytes <= t.bytes.front()) {
    e.seconds = t.seconds.front();  // launch-bound floor
    e.source = bytes == t.bytes.front() ? CostSource::Measured : CostSource::Extrapolated;
    e.detail = "memory table: at or below its smallest size (launch-bound)";
  } else if (bytes > t.bytes.back() * (1 + 1e-9)) {
    e.seconds = t.seconds.back() * bytes / t.bytes.back();
    e.source = CostSource::Extrapolated;
    e.detail = "memory table: bandwidth of its largest size";
  } else {
    Pos p = locate(t.bytes, bytes);
    e.seconds = lerp_log(t.seconds[p.i0], t.seconds[p.i1], p.w);
    e.source = CostSource::Measured;
    e.detail = "memory table, log-space interpolation";
  }
  e.achieved = bytes / e.seconds;
  return e;
}

CostEstimate CalibratedCostModel::memory_bound_queued(double bytes) const {
  if (!(bytes >= 0)) throw Error("memory_bound_queued: bytes must be >= 0");
  const auto& fw = profile_.framework;
  const std::vector<double>* add = nullptr;
  if (fw) {
    auto it = fw->elementwise_seconds.find("add_bf16");
    if (it != fw->elementwise_seconds.end()) add = &it->second;
  }
  if (!add) return memory_bound(bytes);
  // (bytes, seconds) of the measured points: a bf16 add reads two operands and writes one.
  std::vector<double> b, t;
  for (std::size_t i = 0; i < add->size(); ++i)
    if (!std::isnan((*add)[i])) {
      b.push_back(6.0 * fw->elementwise_elements[i]);
      t.push_back((*add)[i]);
    }
  if (b.empty()) return memory_bound(bytes);
  CostEstimate e;
  e.ceiling = profile_.ceilings.copy_GBps * 1e9;
  if (bytes <= b.front()) {
    e.seconds = t.front();
    e.source = CostSource::Measured;
    e.detail = "queued elementwise GPU time: at or below its smallest size (the per-kernel floor)";
  } else if (bytes >= b.back()) {
    e.seconds = t.back() * bytes / b.back();
    e.source = CostSource::Extrapolated;
    e.detail = "queued elementwise GPU time: bandwidth of its largest size";
  } else {
    Pos p = locate(b, bytes);
    e.seconds = lerp_log(t[p.i0], t[p.i1], p.w);
    e.source = CostSource::Measured;
    e.detail = "queued elementwise GPU time (framework.elementwise add_bf16), log-space interpolation";
  }
  e.achieved = bytes / e.seconds;
  return e;
}

double CalibratedCostModel::graph_kernel_seconds() const {
  const double g = profile_.ceilings.graph_kernel_us;
  return g > 0 ? g * 1e-6 : launch_overhead_seconds();
}

std::optional<double> CalibratedCostModel::row_kernel_seconds(const std::string& kind, double rows,
                                                              double width) const {
  const auto& t = profile_.serving_kernels;
  if (!t || !(rows > 0) || !(width > 0)) return std::nullopt;
  auto it = t->kernels.find(kind);
  if (it == t->kernels.end() || it->second.empty()) return std::nullopt;
  const std::vector<double>& r = t->rows;
  auto at_rows = [&](const std::vector<double>& s) {
    if (rows <= r.front()) return s.front();
    if (rows >= r.back()) return s.back() * rows / r.back();
    const Pos p = locate(r, rows);
    return lerp_log(s[p.i0], s[p.i1], p.w);
  };
  const auto& ws = it->second;
  double sec;
  if (ws.size() == 1) {
    sec = at_rows(ws[0].second) * width / ws[0].first;
  } else {
    std::size_t hi = 1;
    while (hi + 1 < ws.size() && ws[hi].first < width) ++hi;
    const double w0 = ws[hi - 1].first, w1 = ws[hi].first;
    const double t0 = at_rows(ws[hi - 1].second), t1 = at_rows(ws[hi].second);
    sec = t0 + (t1 - t0) * (width - w0) / (w1 - w0);
  }
  return std::max(sec, graph_kernel_seconds());
}

double CalibratedCostModel::framework_op_seconds() const {
  const auto& fw = profile_.framework;
  return fw && fw->aten_op_us_nograd > 0 ? fw->aten_op_us_nograd * 1e-6 : launch_overhead_seconds();
}

std::unique_ptr<CalibratedCostModel> make_calibrated_cost_model(const std::string& gpu_name,
                                                                const std::string& profile_path, bool force) {
  const GpuSpec& spec = find_gpu(gpu_name);
  Profile p =
      profile_path.empty() ? default_profile(gpu_name) : load_profile_for(profile_path, gpu_name, force);
  if (force) p.gpu = gpu_name;  // forced: use the other GPU's numbers under this name
  return std::make_unique<CalibratedCostModel>(std::move(p), spec);
}

std::vector<HoldoutRow> holdout_rows(const CostModel& cm, const Profile& p, double min_gemm_seconds) {
  std::vector<HoldoutRow> rows;
  auto push = [&](const char* kind, std::string shape, double measured, const CostEstimate& e) {
    HoldoutRow r;
    r.kind = kind;
    r.shape = std::move(shape);
    r.measured_seconds = measured;
    r.predicted_seconds = e.seconds;
    r.rel_error = std::fabs(e.seconds - measured) / measured;
    r.source = e.source;
    rows.push_back(std::move(r));
  };
  auto push_gemm = [&](const char* kind, const HoldoutGemm& h, double measured, const CostEstimate& e) {
    push(kind, std::string(dtype_name(h.dtype)) + " " + fmt_shape(h.m, h.n, h.k), measured, e);
    rows.back().m = h.m, rows.back().n = h.n, rows.back().k = h.k;
  };
  const auto* calibrated = dynamic_cast<const CalibratedCostModel*>(&cm);
  for (const auto& h : p.holdout_gemm) {
    if (h.seconds < min_gemm_seconds) continue;
    // Transformer-shaped (n, k multiples of 64: model dimensions) vs arbitrary sizes.
    const bool aligned = h.n % 64 == 0 && h.k % 64 == 0;
    // Timed with the tables, on their machine: compared with the model as tabled (no fleet corrections).
    const GemmShape hs = make_gemm(h.m, h.n, h.k, h.dtype);
    const CostEstimate e = calibrated ? calibrated->gemm_as_tabled(hs) : cm.gemm(hs);
    push_gemm(aligned ? "gemm" : "gemm_odd", h, calibrated ? calibrated->at_reference_clock(h) : h.seconds,
              e);
    // As measured: the clock the GPU happened to run at is not known to the model.
    push_gemm(aligned ? "gemm_as_measured" : "gemm_odd_as_measured", h, h.seconds, e);
  }
  // GEMM shapes of real workloads (held out, or the profile's exact shapes) against the tables'
  // prediction: neither ever entered the tables.
  if (calibrated)
    for (const auto* list : {&p.holdout_workload, &p.gemm_exact})
      for (const HoldoutGemm& h : *list) {
        if (h.seconds < min_gemm_seconds) continue;
        push_gemm("gemm_workload", h, calibrated->at_reference_clock(h),
                  calibrated->gemm_from_tables(make_gemm(h.m, h.n, h.k, h.dtype), true));
      }
  for (const auto& h : p.holdout_prefill) {
    AttentionPrefillShape s;
    s.batch = h.batch;
    s.q_len = s.kv_len = h.seq_len;
    s.heads = h.heads;
    s.kv_heads = h.kv_heads;
    s.head_dim = h.head_dim;
    s.causal = h.causal;
    std::ostringstream o;
    o << "b" << h.batch << " S" << h.seq_len << " h" << h.heads << "/" << h.kv_heads << " d" << h.head_dim;
    push("attention_prefill", o.str(), h.seconds, cm.attention_prefill(s));
  }
  for (const auto& h : p.holdout_decode) {
    AttentionDecodeShape s;
    s.batch = h.batch;
    s.total_context_tokens = h.batch * h.context;
    s.heads = h.heads;
    s.kv_heads = h.kv_heads;
    s.head_dim = h.head_dim;
    std::ostringstream o;
    o << "b" << h.batch << " ctx" << h.context << " h" << h.heads << "/" << h.kv_heads << " d" << h.head_dim;
    push("attention_decode", o.str(), h.seconds, cm.attention_decode(s));
  }
  for (const auto& h : p.holdout_memory) {
    if (h.seconds < min_gemm_seconds) continue;
    std::ostringstream o;
    o << std::int64_t(h.bytes) << " B";
    push("memory_bound", o.str(), h.seconds, cm.memory_bound(h.bytes));
  }
  return rows;
}

std::vector<HoldoutStats> holdout_stats(const std::vector<HoldoutRow>& rows) {
  std::vector<HoldoutStats> out;
  for (const char* kind : {"gemm", "gemm_odd", "gemm_as_measured", "gemm_odd_as_measured", "gemm_workload",
                           "attention_prefill", "attention_decode", "memory_bound"}) {
    std::vector<double> e;
    for (const auto& r : rows)
      if (r.kind == kind) e.push_back(r.rel_error);
    if (e.empty()) continue;
    std::sort(e.begin(), e.end());
    HoldoutStats s;
    s.kind = kind;
    s.count = e.size();
    auto q = [&](double f) {
      double idx = f * double(e.size() - 1);
      std::size_t lo = std::size_t(std::floor(idx)), hi = std::size_t(std::ceil(idx));
      return e[lo] + (e[hi] - e[lo]) * (idx - double(lo));
    };
    s.median = q(0.5);
    s.p90 = q(0.9);
    s.max = e.back();
    out.push_back(s);
  }
  return out;
}

}  // namespace infraplan::hw
