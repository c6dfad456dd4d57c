// Validation section: predicted (from the results) against measured values given by the user.
#include <cmath>

#include "common/error.hpp"
#include "report/format.hpp"
#include "report/sections.hpp"

namespace infraplan::report {

Section validation_section(const std::vector<ResultView>& results, const ReportInputs& in) {
  Section s{"validation", "Validation: predicted vs measured", {}};
  const std::string origin = in.measured_origin.empty() ? "measured values" : in.measured_origin;
  if (!in.measured.is_object() || !in.measured.contains("values") || !in.measured["values"].is_object())
    throw Error(origin + ": expected {\"source\": \"...\", \"values\": {\"<result key>\": number, ...}}");
  if (in.measured["values"].empty())
    throw Error(origin + ": 'values' is empty; give at least one measured number");
  if (in.measured.contains("source") && in.measured["source"].is_string())
    s.blocks.push_back(Paragraph{"Measured: " + in.measured["source"].get<std::string>(), false});
  Table t;
  t.caption = "Each measured number against the prediction at the same key";
  t.header = {"quantity", "predicted", "measured", "error"};
  double sum_abs = 0;
  int n = 0;
  for (const auto& [key, mv] : in.measured["values"].items()) {
    const std::string ptr = key.empty() || key[0] != '/' ? "/" + key : key;
    if (!mv.is_number()) throw Error(origin + ": values." + key + " must be a number, found " + mv.dump());
    const ResultView* hit = nullptr;
    for (const auto& r : results)
      if (r.has(ptr) && r.at(ptr).is_number()) {
        hit = &r;
        break;
      }
    if (!hit)
      throw Error(origin + ": values." + key + ": no result has a number at '" + ptr.substr(1) +
                  "' (keys are paths into the --json output, e.g. iteration_time_s or metrics/ttft_ms/p50)");
    const double p = hit->number(ptr), m = mv.get<double>();
    Value pv = hit->plain(ptr), mval = derived(m, [](double x) { return fmt_sig(x); });
    const double err = m != 0 ? (p - m) / m : 0;
    sum_abs += std::fabs(err);
    ++n;
    t.rows.push_back({text(ptr.substr(1)), pv, mval,
                      derived(err, [](double x) { return (x >= 0 ? "+" : "") + fmt_percent(x, 1); })});
  }
  s.blocks.push_back(t);
  s.blocks.push_back(Paragraph{"Mean absolute error over " + std::to_string(n) +
                                   " quantities: " + fmt_percent(sum_abs / n, 1) +
                                   ". Error = (predicted − measured) / measured.",
                               true});
  return s;
}

}  // namespace infraplan::report
