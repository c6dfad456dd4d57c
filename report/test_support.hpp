#pragma once
// Shared by the report tests: results of real runs (each computed once per test binary) and
// checks on HTML text — sections, charts, references to the network, and that every number the
// page traces to a result equals that result's JSON number and is shown rounded from it.
#include <string>
#include <vector>

#include "common/json_util.hpp"
#include "report/report.hpp"

namespace infraplan::report::testing {

/// A result document and where it came from.
struct Fixture {
  std::string name;  ///< "memory-train", "simulate-train", ...
  std::vector<Json> results;
  std::vector<std::string> origins;
  Json measured;                ///< measured values (the validation fixture), or null
  std::string measured_origin;  ///< where `measured` comes from
};

/// The report kinds the tests cover: memory-train, memory-serve, simulate-train, simulate-serve,
/// plan-train, plan-serve, and validation (a simulate-train result with measured values).
const std::vector<std::string>& fixture_names();
/// The result of one kind, from a scenario of scenarios/ (or report/testdata/) run in-process as
/// `infraplan report --scenario` runs it; computed on first use, then cached.
const Fixture& fixture(const std::string& name);

/// ReportInputs for a fixture with a fixed date (deterministic output).
ReportInputs inputs_for(const Fixture& f);

/// Ids of the <section> elements, in order.
std::vector<std::string> section_ids(const std::string& html);
/// The <svg>…</svg> elements.
std::vector<std::string> svg_elements(const std::string& html);
/// Drawn marks (rect, polyline, polygon, circle, line) inside one svg.
int svg_marks(const std::string& svg);

/// One traced number on the page.
struct Traced {
  int result = 0;
  std::string key, text;
  double value = 0;
};
std::vector<Traced> traced_values(const std::string& html);

/// Empty when `t.text` shows `json_value` correctly rounded (unit-aware, see format.hpp); else why not.
std::string check_shown(const Traced& t, double json_value);

/// True when chromium is installed (the browser tests skip otherwise).
std::string chromium_path();

}  // namespace infraplan::report::testing
