#include "report/result_view.hpp"

#include "common/error.hpp"
#include "report/format.hpp"

namespace infraplan::report {

namespace {

struct KindName {
  ResultKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {ResultKind::MemoryTrain, "memory-train"},
    {ResultKind::MemoryServe, "memory-serve"},
    {ResultKind::SimulateTrain, "simulate-train"},
    {ResultKind::SimulateTrainEstimate, "simulate-train-estimate"},
    {ResultKind::SimulateServe, "simulate-serve"},
    {ResultKind::PlanTrain, "plan-train"},
    {ResultKind::PlanServe, "plan-serve"},
};

}  // namespace

const char* result_kind_name(ResultKind k) {
  for (const auto& e : kKinds)
    if (e.kind == k) return e.name;
  return "?";
}

std::vector<std::string> result_kind_names() {
  std::vector<std::string> v;
  for (const auto& e : kKinds) v.emplace_back(e.name);
  return v;
}

ResultKind result_kind(const Json& j, const std::string& origin) {
  if (!j.is_object())
    throw Error(origin + ": not an infraplan result (expected a JSON object as printed by --json)");
  if (!j.contains("result_kind"))
    throw Error(origin +
                ": not an infraplan result, or one written before results carried a kind (no 'result_kind' "
                "key); re-run the command with --json. Reports read: " +
                join(result_kind_names()));
  if (!j["result_kind"].is_string()) throw Error(origin + ": result_kind must be a string");
  const std::string name = j["result_kind"].get<std::string>();
  const KindName* found = nullptr;
  for (const auto& e : kKinds)
    if (name == e.name) found = &e;
  if (!found) throw Error(origin + ": " + unknown_name_message("result_kind", name, result_kind_names()));
  if (!j.contains("result_version") || !j["result_version"].is_number_integer())
    throw Error(origin + ": result_version missing or not an integer (this infraplan reads version " +
                std::to_string(kResultVersion) + ")");
  const int v = j["result_version"].get<int>();
  if (v != kResultVersion)
    throw Error(origin + ": result_version " + std::to_string(v) + " of '" + name +
                "' is not readable here: this " + "infraplan reads version " +
                std::to_string(kResultVersion) +
                (v > kResultVersion ? " (the file comes from a newer infraplan)" : ""));
  return found->kind;
}

Json Provenance::to_json() const {
  Json p = {
      {"infraplan_version", infraplan_version}, {"git_commit", git_commit}, {"command_line", command_line}};
  if (!scenario_file.empty()) p["scenario_file"] = scenario_file;
  if (!scenario.is_null()) p["scenario"] = scenario;
  if (!profile.is_null()) p["profile"] = profile;
  return p;
}

void stamp_result(Json& j, ResultKind kind, const Provenance& p) {
  j["result_kind"] = result_kind_name(kind);
  j["result_version"] = kResultVersion;
  j["provenance"] = p.to_json();
}

ResultView::ResultView(const Json& j, int index, std::string origin)
    : j_(j), index_(index), origin_(std::move(origin)) {}

bool ResultView::has(const std::string& pointer) const {
  try {
    return j_.contains(Json::json_pointer(pointer));
  } catch (const std::exception&) {
    return false;
  }
}

const Json& ResultView::at(const std::string& pointer) const {
  if (!has(pointer))
    throw Error(origin_ + ": the result has no '" + pointer.substr(1) + "' (malformed or edited file?)");
  return j_.at(Json::json_pointer(pointer));
}

double ResultView::number(const std::string& pointer) const {
  const Json& v = at(pointer);
  if (!v.is_number())
    throw Error(origin_ + ": '" + pointer.substr(1) + "' must be a number, found " + v.dump());
  return v.get<double>();
}

std::optional<double> ResultView::opt_number(const std::string& pointer) const {
  if (!has(pointer)) return std::nullopt;
  const Json& v = j_.at(Json::json_pointer(pointer));
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::string ResultView::string(const std::string& pointer, const std::string& fallback) const {
  if (!has(pointer)) return fallback;
  const Json& v = j_.at(Json::json_pointer(pointer));
  return v.is_string() ? v.get<std::string>() : v.dump();
}

Value ResultView::value(const std::string& pointer, const std::function<std::string(double)>& format) const {
  const double x = number(pointer);
  Value v;
  v.text = format(x);
  v.key = pointer;
  v.result = index_;
  v.raw = x;
  return v;
}

Value ResultView::seconds(const std::string& p) const {
  return value(p, [](double x) { return fmt_seconds(x); });
}
Value ResultView::ms(const std::string& p) const {
  return value(p, [](double x) { return fmt_ms(x); });
}
Value ResultView::bytes(const std::string& p) const {
  return value(p, [](double x) { return fmt_bytes(x); });
}
Value ResultView::percent(const std::string& p, int decimals) const {
  return value(p, [decimals](double x) { return fmt_percent(x, decimals); });
}
Value ResultView::rate(const std::string& p, const std::string& unit) const {
  return value(p, [unit](double x) { return fmt_rate(x, unit); });
}
Value ResultView::count(const std::string& p) const {
  return value(p, [](double x) { return fmt_int((long long)std::llround(x)); });
}
Value ResultView::plain(const std::string& p) const {
  return value(p, [](double x) { return fmt_sig(x); });
}

Value derived(double v, const std::function<std::string(double)>& format) {
  Value out;
  out.text = format(v);
  return out;
}

}  // namespace infraplan::report
