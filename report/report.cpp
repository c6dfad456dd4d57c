#include "report/report.hpp"

#include <set>

#include "common/error.hpp"
#include "report/format.hpp"
#include "report/render.hpp"
#include "report/sections.hpp"

namespace infraplan::report {

namespace {

std::string scenario_name(const ResultView& r) {
  if (r.has("/scenario") && r.at("/scenario").is_string()) return r.string("/scenario");
  if (r.has("/provenance/scenario/name")) return r.string("/provenance/scenario/name");
  return "";
}

// One line per result that answers its question, for the summary at the top.
std::string headline(const ResultView& r, ResultKind k) {
  switch (k) {
    case ResultKind::MemoryTrain:
    case ResultKind::MemoryServe:
      return "Memory: " + r.string("/verdict") + " (" + r.string("/scope") + ").";
    case ResultKind::SimulateTrain:
    case ResultKind::SimulateTrainEstimate: {
      std::string s = "Training: one iteration takes " + fmt_seconds(r.number("/iteration_time_s"));
      if (r.has("/iteration_time_range_s") && r.at("/iteration_time_range_s").size() == 2)
        s += " (range " + fmt_seconds(r.number("/iteration_time_range_s/0")) + " – " +
             fmt_seconds(r.number("/iteration_time_range_s/1")) + ")";
      s += ", " + fmt_rate(r.number("/tokens_per_s"), "tokens/s") + ", MFU " +
           fmt_percent(r.number("/mfu"), 1) + ", peak memory " + fmt_bytes(r.number("/peak_bytes")) +
           " per GPU.";
      return s;
    }
    case ResultKind::SimulateServe: {
      std::string s = "Serving: " + fmt_int((long long)r.number("/metrics/requests")) + " requests at " +
                      fmt_rate(r.number("/metrics/throughput_rps"), "req/s") + "; goodput " +
                      fmt_rate(r.number("/metrics/goodput_rps"), "req/s") + " (" +
                      fmt_percent(r.number("/metrics/slo_attainment"), 1) + " meet the SLOs); TTFT p90 " +
                      fmt_ms(r.number("/metrics/ttft_ms/p90")) + ", TPOT p90 " +
                      fmt_ms(r.number("/metrics/tpot_ms/p90")) + ".";
      return s;
    }
    case ResultKind::PlanTrain: {
      if (r.at("/candidates").empty()) return "Training plan: no layout fits.";
      return "Training plan: recommended " + r.string("/best/pp_schedule") +
             " layout tp=" + r.string("/best/tp") + " pp=" + r.string("/best/pp") +
             " dp=" + r.string("/best/dp") + " zero=" + r.string("/best/zero") + ", " +
             fmt_seconds(r.number("/best/iteration_time_s")) + " per iteration, MFU " +
             fmt_percent(r.number("/best/mfu"), 1) + " (" +
             fmt_int((long long)r.number("/layouts_estimated")) + " layouts estimated).";
    }
    case ResultKind::PlanServe: {
      if (r.at("/candidates").empty()) return "Serving plan: no deployment meets the SLOs.";
      return "Serving plan: recommended " + r.string("/best/label") + " on " + r.string("/best/gpus") +
             " GPUs, goodput " + fmt_rate(r.number("/best/goodput_rps"), "req/s") +
             (r.at("/best").value("meets_target", false) ? ", meets the target."
                                                         : ", does NOT meet the target.");
    }
  }
  return "";
}

const char* kind_title(ResultKind k) {
  switch (k) {
    case ResultKind::MemoryTrain:
      return "Training memory";
    case ResultKind::MemoryServe:
      return "Serving memory";
    case ResultKind::SimulateTrain:
      return "Training simulation";
    case ResultKind::SimulateTrainEstimate:
      return "Training estimate";
    case ResultKind::SimulateServe:
      return "Serving simulation";
    case ResultKind::PlanTrain:
      return "Training plan";
    case ResultKind::PlanServe:
      return "Serving plan";
  }
  return "Result";
}

}  // namespace

Format parse_format(const std::string& name, const std::string& flag) {
  if (name == "html") return Format::Html;
  if (name == "md" || name == "markdown") return Format::Markdown;
  throw Error(unknown_name_message(flag, name, {"html", "md"}));
}

Document build_report(const ReportInputs& in) {
  if (in.results.empty()) throw Error("report: no results to report on");
  std::vector<ResultView> views;
  std::vector<ResultKind> kinds;
  for (std::size_t i = 0; i < in.results.size(); ++i) {
    const std::string origin = i < in.origins.size() ? in.origins[i] : "result " + std::to_string(i + 1);
    kinds.push_back(result_kind(in.results[i], origin));
    views.emplace_back(in.results[i], int(i), origin);
  }
  Document d;
  const std::string name = scenario_name(views[0]);
  d.title = std::string(kind_title(kinds[0])) + (name.empty() ? "" : ": " + name);
  for (std::size_t i = 1; i < kinds.size(); ++i) d.title += " + " + std::string(kind_title(kinds[i]));
  if (views[0].has("/provenance/scenario/description"))
    d.subtitle = views[0].string("/provenance/scenario/description");

  Section summary{"summary", "Summary", {}};
  BulletList lines;
  for (std::size_t i = 0; i < views.size(); ++i) lines.items.push_back(headline(views[i], kinds[i]));
  summary.blocks.push_back(lines);
  d.sections.push_back(summary);

  for (std::size_t i = 0; i < views.size(); ++i) {
    const auto& r = views[i];
    switch (kinds[i]) {
      case ResultKind::MemoryTrain:
        d.sections.push_back(memory_section(r, "", "/stages"));
        break;
      case ResultKind::MemoryServe:
        d.sections.push_back(memory_section(r, "", ""));
        if (r.has("/kv_capacity_tokens"))
          d.sections.back().blocks.push_back(
              Paragraph{"KV cache: room for " + fmt_int((long long)r.number("/kv_capacity_tokens")) +
                            " tokens per replica (" +
                            fmt_sig(r.number("/kv_capacity_tokens") / std::max(1.0, r.number("/context"))) +
                            " sequences of " + fmt_int((long long)r.number("/context")) + " tokens).",
                        false});
        break;
      case ResultKind::SimulateTrain:
        d.sections.push_back(training_section(r));
        d.sections.push_back(memory_section(r, "/memory", "/memory_stages"));
        break;
      case ResultKind::SimulateTrainEstimate:
        d.sections.push_back(training_section(r));
        break;
      case ResultKind::SimulateServe:
        d.sections.push_back(serving_section(r));
        break;
      case ResultKind::PlanTrain:
        d.sections.push_back(plan_train_section(r, in));
        break;
      case ResultKind::PlanServe:
        d.sections.push_back(plan_serve_section(r, in));
        break;
    }
  }
  if (!in.measured.is_null()) d.sections.push_back(validation_section(views, in));
  d.sections.push_back(provenance_section(views, in));
  // Section ids must be unique anchors.
  std::set<std::string> seen;
  for (auto& s : d.sections) {
    std::string id = s.id;
    for (int n = 2; seen.count(id); ++n) id = s.id + "-" + std::to_string(n);
    s.id = id;
    seen.insert(id);
  }
  return d;
}

std::string write_report(const ReportInputs& in, Format f) {
  const Document d = build_report(in);
  RenderOptions o;
  o.generator = in.generator;
  return f == Format::Html ? render_html(d, o) : render_markdown(d, o);
}

}  // namespace infraplan::report
