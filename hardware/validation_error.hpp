#pragma once
// How far the model's answers fell from measurements it was checked against: the quantiles of
// measured / predicted over a profile's validation rows (profile "validation_error"), for a kind of
// prediction — "training_step" (whole training steps), "gemm" (GEMMs through a framework),
// "serving_ttft" / "serving_tpot" (the mini-engine's TTFT and TPOT p50). A
// prediction t of that kind gets the interval [t·p10, t·p90]: where 80% of those measurements fell
// relative to their predictions. It says what the machine spread (Profile::spread) does not: what
// the model itself leaves out. The quantiles are taken on one set of rows (`rows`) and checked on
// rows measured later that nothing was chosen on (`held_out_rows`, `held_out_coverage`); they never
// move a point prediction. Written by bench/calib/validation_error_to_profile.py from the accuracy
// tests (docs/accuracy.md, "Validated error").
#include <string>
#include <utility>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::hw {

/// Where measured / predicted fell over a set of rows, and how later rows fared against it.
struct ValidationQuantiles {
  double p10 = 1, p50 = 1, p90 = 1;  ///< quantiles of measured / predicted (p10 ≤ p50 ≤ p90, > 0)
  int rows = 0;                      ///< measurements the quantiles were taken on
  int held_out_rows = 0;             ///< later measurements the interval was checked on
  double held_out_coverage = 0;      ///< share of them inside [p10, p90]
};

/// The record's quantiles over the rows whose prediction fell in [from_s, to_s): a kind whose error
/// depends on the size of what is predicted (GEMMs of tens of µs run at another clock than GEMMs of
/// milliseconds in the benchmarks they were checked on) carries one per band of predicted time.
struct ValidationBand : ValidationQuantiles {
  double from_s = 0;  ///< lower edge, seconds (inclusive; the first band starts at 0)
  double to_s = 0;    ///< upper edge, seconds (exclusive; infinity for the last band)
};

struct ValidationError : ValidationQuantiles {
  std::string what;  ///< what the rows are (one phrase)
  /// The same by band of predicted time (ascending, contiguous, from 0 to infinity); empty: the
  /// record holds for every size.
  std::vector<ValidationBand> bands;

  /// [t·p10, t·p90] seconds for a prediction of t seconds (this record's quantiles; for a banded
  /// record take for_prediction(t) first).
  std::pair<double, double> interval(double predicted_seconds) const {
    return {predicted_seconds * p10, predicted_seconds * p90};
  }
  /// The band a prediction of t seconds falls in; nullptr without bands.
  const ValidationBand* band_of(double predicted_seconds) const;
  /// The record a prediction of t seconds takes: its band's quantiles, rows and held-out check, with
  /// the band named in `what` (", predicted 30-100 us"); without bands, this record.
  ValidationError for_prediction(double predicted_seconds) const;
  /// "80% of 40 measured <what> took 0.96–1.14× the prediction (median 1.03×); inside on 50 of 52
  /// held-out rows".
  std::string summary() const;
};

/// The record of measured / predicted ratios: p10 / p50 / p90 of `fit` (the quantile f at rank
/// f·(n + 1) of the n sorted rows, interpolated, clamped to the first and last: a band that holds 80%
/// of later rows on average from 9 rows on), its row count, and the share of `held_out` inside [p10, p90]. `fit` non-empty.
ValidationError validation_error_of(std::vector<double> fit, const std::vector<double>& held_out,
                                    std::string what);

/// validation_error_of over all rows, and again per band of predicted time: `fit` and `held_out` as
/// (predicted seconds, measured / predicted); `edges` the bands' inner edges in seconds, ascending
/// (n edges make n + 1 bands, the first from 0, the last open). Every band needs fit rows.
ValidationError validation_error_by_time(const std::vector<std::pair<double, double>>& fit,
                                         const std::vector<std::pair<double, double>>& held_out,
                                         std::string what, const std::vector<double>& edges);

/// Where a record's rows come from, for the file bench/calib/validation_error_to_profile.py merges.
struct ValidationErrorSources {
  std::string source;           ///< the rows the quantiles were taken on
  std::string held_out_source;  ///< the rows they were checked on
  std::string command;          ///< the test that computes the record
};
/// {"kind", "p10", "p50", "p90", "rows", "what", "source", "held_out_rows", "held_out_coverage",
/// "held_out_source", "command"} and, for a banded record, "bands": [{"from_s", "to_s" (absent for the
/// last), "p10", "p50", "p90", "rows", "held_out_rows", "held_out_coverage"}].
Json validation_error_record(const std::string& kind, const ValidationError& v,
                             const ValidationErrorSources& from);

}  // namespace infraplan::hw
