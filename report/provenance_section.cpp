// Provenance section: what was asked (the scenario as given), with which data (the hardware
// profile), by which build, when and with which command — enough to reproduce every number.
#include "report/format.hpp"
#include "report/sections.hpp"

namespace infraplan::report {

Section provenance_section(const std::vector<ResultView>& results, const ReportInputs& in) {
  Section s{"provenance", "Provenance", {}};
  Table t;
  t.caption = "How each result was produced";
  t.header = {"result", "infraplan", "commit", "command", "hardware profile"};
  std::vector<std::pair<std::string, std::string>> scenarios;
  for (const auto& r : results) {
    const std::string p = "/provenance";
    std::string profile = "—";
    if (r.has(p + "/profile")) {
      const auto& pr = r.at(p + "/profile");
      profile = pr.value("kind", std::string("?"));
      if (pr.contains("gpu")) profile += ", " + pr.value("gpu", std::string(""));
      if (pr.contains("device") && !pr.value("device", std::string("")).empty())
        profile += " (" + pr.value("device", std::string("")) + ")";
      if (pr.contains("derived_from") && !pr.value("derived_from", std::string("")).empty())
        profile += ", derived from " + pr.value("derived_from", std::string(""));
      if (pr.contains("date") && !pr.value("date", std::string("")).empty())
        profile += ", measured " + pr.value("date", std::string(""));
      if (pr.contains("origin")) profile += "; " + pr.value("origin", std::string(""));
    } else if (r.has("/cost_model")) {
      profile = r.string("/cost_model");
    }
    const std::string cmd = r.string(p + "/command_line", "?");
    std::string what = result_kind_name(result_kind(r.json(), r.origin()));
    if (r.origin() != cmd) what += " (" + r.origin() + ")";
    t.rows.push_back({text(what), text(r.string(p + "/infraplan_version", "?")),
                      text(r.string(p + "/git_commit", "?")), text(cmd), text(profile)});
    if (r.has(p + "/scenario"))
      scenarios.push_back({r.string(p + "/scenario_file", "scenario"), r.at(p + "/scenario").dump(2)});
  }
  s.blocks.push_back(t);
  Table w;
  w.caption = "This report";
  w.header = {"written (UTC)", "by", "command"};
  w.rows.push_back({text(in.generated_at.empty() ? "?" : in.generated_at),
                    text(in.generator.empty() ? "infraplan" : in.generator),
                    text(in.command_line.empty() ? "—" : in.command_line)});
  s.blocks.push_back(w);
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    bool dup = false;
    for (std::size_t j = 0; j < i; ++j) dup = dup || scenarios[j].second == scenarios[i].second;
    if (dup) continue;
    s.blocks.push_back(Paragraph{"Scenario as given (" + scenarios[i].first + "):", false});
    s.blocks.push_back(Code{"json", scenarios[i].second});
  }
  return s;
}

}  // namespace infraplan::report
