#include "hardware/validation_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.hpp"

namespace infraplan::hw {

std::string ValidationError::summary() const {
  char buf[512];
  std::snprintf(buf, sizeof buf, "80%% of %d measured %s took %.2f-%.2fx the prediction (median %.2fx)", rows,
                what.c_str(), p10, p90, p50);
  std::string s = buf;
  if (held_out_rows > 0) {
    std::snprintf(buf, sizeof buf, "; inside on %d of %d held-out rows",
                  int(std::lround(held_out_coverage * held_out_rows)), held_out_rows);
    s += buf;
  }
  return s;
}

namespace {

/// "30-100 us", "below 30 us", "1 ms or more": a band of predicted time, for `what`.
std::string band_name(const ValidationBand& b) {
  auto t = [](double s) {
    char buf[32];
    if (s >= 1e-3)
      std::snprintf(buf, sizeof buf, "%g ms", s * 1e3);
    else
      std::snprintf(buf, sizeof buf, "%g us", s * 1e6);
    return std::string(buf);
  };
  if (b.from_s <= 0) return "below " + t(b.to_s);
  if (!std::isfinite(b.to_s)) return t(b.from_s) + " or more";
  const std::string lo = t(b.from_s), hi = t(b.to_s);
  const std::size_t space = lo.find(' ');
  // "30-100 us"; "300 us-1 ms" where the unit changes.
  if (lo.substr(space) == hi.substr(hi.find(' '))) return lo.substr(0, space) + "-" + hi;
  return lo + "-" + hi;
}

}  // namespace

const ValidationBand* ValidationError::band_of(double predicted_seconds) const {
  for (const ValidationBand& b : bands)
    if (predicted_seconds >= b.from_s && predicted_seconds < b.to_s) return &b;
  return nullptr;
}

ValidationError ValidationError::for_prediction(double predicted_seconds) const {
  const ValidationBand* b = band_of(predicted_seconds);
  if (!b) return *this;
  ValidationError v;
  static_cast<ValidationQuantiles&>(v) = *b;
  v.what = what + ", predicted " + band_name(*b);
  return v;
}

ValidationError validation_error_of(std::vector<double> fit, const std::vector<double>& held_out,
                                    std::string what) {
  if (fit.empty()) throw Error("validation_error_of: no rows to take quantiles of");
  std::sort(fit.begin(), fit.end());
  // The quantile f sits at rank f·(n + 1) among the n sorted rows (1-based, interpolated, clamped
  // to the first and last row): the k-th of n exchangeable rows lies, on average, at the k/(n + 1)
  // quantile of the rows still to come, so [p10, p90] placed this way holds 80% of later rows on
  // average from 9 rows on (fewer rows: their range, which holds (n − 1)/(n + 1)). Ranks f·(n − 1) + 1 (the usual interpolation) put the band between rows that
  // hold only (0.8·(n − 1))/(n + 1) of later rows: 72% for 18 rows, 76% for 40.
  auto q = [&](double f) {
    const double rank = std::clamp(f * double(fit.size() + 1), 1.0, double(fit.size()));
    const std::size_t lo = std::size_t(rank) - 1, hi = std::min(lo + 1, fit.size() - 1);
    return fit[lo] + (fit[hi] - fit[lo]) * (rank - std::floor(rank));
  };
  ValidationError v;
  v.p10 = q(0.1), v.p50 = q(0.5), v.p90 = q(0.9);
  v.rows = int(fit.size());
  v.what = std::move(what);
  v.held_out_rows = int(held_out.size());
  const auto inside =
      std::count_if(held_out.begin(), held_out.end(), [&](double r) { return r >= v.p10 && r <= v.p90; });
  v.held_out_coverage = held_out.empty() ? 0.0 : double(inside) / double(held_out.size());
  return v;
}

ValidationError validation_error_by_time(const std::vector<std::pair<double, double>>& fit,
                                         const std::vector<std::pair<double, double>>& held_out,
                                         std::string what, const std::vector<double>& edges) {
  for (std::size_t i = 0; i < edges.size(); ++i)
    if (!(edges[i] > 0) || (i > 0 && !(edges[i] > edges[i - 1])))
      throw Error("validation_error_by_time: band edges must be positive and ascending");
  auto ratios = [](const std::vector<std::pair<double, double>>& rows, double lo, double hi) {
    std::vector<double> out;
    for (const auto& [predicted, ratio] : rows)
      if (predicted >= lo && predicted < hi) out.push_back(ratio);
    return out;
  };
  const double inf = std::numeric_limits<double>::infinity();
  ValidationError v = validation_error_of(ratios(fit, 0, inf), ratios(held_out, 0, inf), std::move(what));
  for (std::size_t i = 0; i <= edges.size(); ++i) {
    ValidationBand b;
    b.from_s = i == 0 ? 0 : edges[i - 1];
    b.to_s = i == edges.size() ? inf : edges[i];
    const std::vector<double> f = ratios(fit, b.from_s, b.to_s);
    if (f.empty()) throw Error("validation_error_by_time: no fit rows predicted at " + band_name(b));
    static_cast<ValidationQuantiles&>(b) = validation_error_of(f, ratios(held_out, b.from_s, b.to_s), "");
    v.bands.push_back(b);
  }
  return v;
}

namespace {

/// {"p10", "p50", "p90", "rows", "held_out_rows", "held_out_coverage"} into `j`.
void put_quantiles(Json& j, const ValidationQuantiles& q) {
  j["p10"] = q.p10, j["p50"] = q.p50, j["p90"] = q.p90, j["rows"] = q.rows;
  j["held_out_rows"] = q.held_out_rows, j["held_out_coverage"] = q.held_out_coverage;
}

}  // namespace

Json validation_error_record(const std::string& kind, const ValidationError& v,
                             const ValidationErrorSources& from) {
  Json r = {{"kind", kind},
            {"what", v.what},
            {"source", from.source},
            {"held_out_source", from.held_out_source},
            {"command", from.command}};
  put_quantiles(r, v);
  if (!v.bands.empty()) {
    Json bands = Json::array();
    for (const ValidationBand& b : v.bands) {
      Json j = {{"from_s", b.from_s}};
      if (std::isfinite(b.to_s)) j["to_s"] = b.to_s;
      put_quantiles(j, b);
      bands.push_back(j);
    }
    r["bands"] = bands;
  }
  return r;
}

}  // namespace infraplan::hw
