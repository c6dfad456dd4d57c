#pragma once
// Reading a result document (what `infraplan ... --json` prints) for the report: which kind it is
// and whether this build can read its version, and typed access by JSON pointer that turns a
// number into a report Value carrying its source (so the page can prove it shows the JSON's
// numbers). A required key that is missing is an infraplan::Error naming the file and the key.
#include <functional>
#include <optional>
#include <string>

#include "common/json_util.hpp"
#include "report/document.hpp"

namespace infraplan::report {

/// The kinds of result a report reads, by the "result_kind" key the CLI writes.
enum class ResultKind {
  MemoryTrain,
  MemoryServe,
  SimulateTrain,
  SimulateTrainEstimate,
  SimulateServe,
  PlanTrain,
  PlanServe
};

/// The "result_version" this build writes and reads.
inline constexpr int kResultVersion = 1;

/// "memory-train", "simulate-serve", ...
const char* result_kind_name(ResultKind k);
/// All kind names, for messages.
std::vector<std::string> result_kind_names();

/// Checks "result_kind" and "result_version" of `j` (read from `origin`); throws infraplan::Error
/// naming the file, the value found and what this build reads.
ResultKind result_kind(const Json& j, const std::string& origin);

/// Where a result comes from; every producer of results (CLI, desktop planner) records it.
struct Provenance {
  std::string infraplan_version;  ///< "0.1.0"
  std::string git_commit;         ///< at configure time ("…-dirty" with local changes)
  std::string command_line;       ///< the command that computed it (or "infraplan-gui")
  std::string scenario_file;      ///< empty when none
  Json scenario;                  ///< the scenario as given (null when none)
  Json profile;                   ///< the cost model's source (sim::CostSetup::provenance), null when none
  /// {"infraplan_version", "git_commit", "command_line"[, "scenario_file", "scenario", "profile"]}.
  Json to_json() const;
};

/// Marks `j` as a result: sets "result_kind", "result_version" (kResultVersion) and "provenance".
void stamp_result(Json& j, ResultKind kind, const Provenance& p);

/// One result with its index in the report (for Value::result) and origin (for messages).
class ResultView {
 public:
  ResultView(const Json& j, int index, std::string origin);
  const Json& json() const { return j_; }
  int index() const { return index_; }
  const std::string& origin() const { return origin_; }

  bool has(const std::string& pointer) const;
  /// The JSON at `pointer`; throws naming the key when absent.
  const Json& at(const std::string& pointer) const;
  /// A number at `pointer`; throws when absent or not a number.
  double number(const std::string& pointer) const;
  std::optional<double> opt_number(const std::string& pointer) const;
  std::string string(const std::string& pointer, const std::string& fallback = "") const;

  /// A Value for the number at `pointer`, shown by `format`.
  Value value(const std::string& pointer, const std::function<std::string(double)>& format) const;
  Value seconds(const std::string& pointer) const;
  Value ms(const std::string& pointer) const;
  Value bytes(const std::string& pointer) const;
  Value percent(const std::string& pointer, int decimals = 2) const;
  Value rate(const std::string& pointer, const std::string& unit) const;
  Value count(const std::string& pointer) const;
  Value plain(const std::string& pointer) const;  ///< fmt_sig, no unit

 private:
  const Json& j_;
  int index_;
  std::string origin_;
};

/// A derived (untraced) number shown with `format`.
Value derived(double v, const std::function<std::string(double)>& format);

}  // namespace infraplan::report
