#pragma once
// Scenario reports: results as the CLI prints them with --json → one self-contained HTML page
// (inline SVG charts and CSS, no scripts, no network) or a Markdown summary.
//
//   ReportInputs in;
//   in.results = {read_json_file("sim.json")};
//   in.origins = {"sim.json"};
//   std::string html = write_report(in, Format::Html);
//
// Sections by result kind: memory (memory-train, memory-serve; also in simulate-train), training
// (simulate-train[-estimate]), serving (simulate-serve), plan (plan-train, plan-serve); then
// validation (when measured values are given) and provenance. Every number shown that comes from
// a result carries its JSON pointer (see report/document.hpp).
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "report/document.hpp"

namespace infraplan::report {

struct ReportInputs {
  std::vector<Json> results;         ///< `infraplan ... --json` documents, in report order
  std::vector<std::string> origins;  ///< where each came from (file name or command), for messages
  /// Measured values for the validation section, or null: {"source": "what was measured, where, when",
  /// "values": {"iteration_time_s": 0.52, "metrics/ttft_ms/p50": 120.0}} — keys are JSON pointers
  /// into the results (leading "/" optional), values in the result's units.
  Json measured;
  std::string measured_origin;    ///< file name of `measured`
  double price_per_gpu_hour = 0;  ///< USD; > 0 adds cost columns to plans
  std::string generated_at;       ///< when the report is written (ISO 8601, UTC)
  std::string command_line;       ///< the command that wrote the report
  std::string generator;          ///< "infraplan 0.1.0 (commit …)"
};

enum class Format { Html, Markdown };
/// "html" or "md" (also "markdown"); throws infraplan::Error naming `flag` otherwise.
Format parse_format(const std::string& name, const std::string& flag = "--format");

/// Checks every result (kind, version) and builds the document. Throws infraplan::Error for an
/// unreadable result, an unknown measured key, or no results.
Document build_report(const ReportInputs& in);

/// build_report + the writer for `f`.
std::string write_report(const ReportInputs& in, Format f);

}  // namespace infraplan::report
