#include "hardware/validation_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"

namespace infraplan::hw {

std::string ValidationError::summary() const {
  char buf[256];
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

Json validation_error_record(const std::string& kind, const ValidationError& v,
                             const ValidationErrorSources& from) {
  return {{"kind", kind},
          {"p10", v.p10},
          {"p50", v.p50},
          {"p90", v.p90},
          {"rows", v.rows},
          {"what", v.what},
          {"source", from.source},
          {"held_out_rows", v.held_out_rows},
          {"held_out_coverage", v.held_out_coverage},
          {"held_out_source", from.held_out_source},
          {"command", from.command}};
}

}  // namespace infraplan::hw
