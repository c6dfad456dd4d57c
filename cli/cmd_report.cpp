// infraplan report --scenario F [--plan] | --from result.json[,more.json] [--out FILE] [--format html|md]
//                  [--measured M.json] [--price-per-gpu-hour USD]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/results.hpp"
#include "cli/scenario_question.hpp"
#include "common/output_files.hpp"
#include "infraplan_build_info.hpp"
#include "common/error.hpp"
#include "report/format.hpp"
#include "report/report.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::cli {

namespace {

const std::vector<OptionSpec> kSpec = {
    {"scenario", true,
     "run the scenario's question (memory, simulate train or simulate serve) and report it"},
    {"question", true, "with --scenario: auto (default), memory or simulate"},
    {"plan", false, "with --scenario: also run plan train or plan serve on it and report the plan"},
    {"from", true, "report results saved with --json (comma-separated for several) instead of running"},
    {"measured", true,
     "measured values for a validation section: {\"source\": ..., \"values\": {\"KEY\": number}}"},
    {"out", true, "output file (default report.html, or report.md with --format md)"},
    {"format", true, "html (one self-contained page, default) or md (Markdown summary)"},
    {"price-per-gpu-hour", true, "USD per GPU-hour: adds cost to plans"},
    {"tokens", true, "with --plan on a training scenario: tokens to train (time-to-train, GPU-hours)"},
    {"roofline", false, "with --scenario: datasheet roofline instead of the GPU's calibrated profile"},
};

// Now in UTC (ISO 8601), or SOURCE_DATE_EPOCH when set (reproducible reports).
std::string now_utc() {
  std::time_t t = std::time(nullptr);
  if (const char* e = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long v = std::strtoll(e, &end, 10);
    if (end && *end == '\0' && v >= 0) t = std::time_t(v);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int cmd_report(const std::vector<std::string>& argv) {
  Args a(argv, kSpec);
  if (a.help()) {
    std::printf(
        "Usage: infraplan report --scenario F [--plan] [--out report.html] [--format html|md]\n"
        "       infraplan report --from result.json [--out report.html] [--format html|md]\n\n"
        "Writes one self-contained HTML page (inline SVG charts and CSS, no scripts, nothing from the\n"
        "network: it opens offline, mails as an attachment and prints) or a Markdown summary. --from\n"
        "reads what memory, simulate train|serve and plan train|serve print with --json.\n\n%s",
        options_help(kSpec).c_str());
    return 0;
  }
  const auto scenario = a.get("scenario");
  const auto from = a.get("from");
  if (scenario.has_value() == from.has_value())
    throw Error(
        "give exactly one of --scenario F (run its question) or --from result.json (report a saved result)");
  if (from && (a.flag("plan") || a.get("question") || a.flag("roofline") || a.get("tokens")))
    throw Error(
        "--plan, --question, --roofline and --tokens apply to --scenario; with --from the result is reported "
        "as saved");
  const auto out_flag = a.get("out");
  report::Format format = report::Format::Html;
  if (auto f = a.get("format")) {
    format = report::parse_format(*f);
  } else if (out_flag && std::filesystem::path(*out_flag).extension() == ".md") {
    format = report::Format::Markdown;
  }
  const std::string out = out_flag.value_or(format == report::Format::Html ? "report.html" : "report.md");

  // The output is checked before any work (not a directory, a device or one of the inputs) and
  // written only when the report is complete.
  OutputFiles outputs;
  if (auto m = a.get("measured")) outputs.add_input(*m);
  if (from)
    for (const auto& f : split_commas(*from)) outputs.add_input(f);
  if (scenario) outputs.add_input(*scenario);
  outputs.add("--out", out);

  report::ReportInputs in;
  if (auto p = a.get_number("price-per-gpu-hour", 0, 1e6)) in.price_per_gpu_hour = *p;
  // Read every input before computing anything, so a missing file fails fast.
  if (auto m = a.get("measured")) {
    in.measured = read_json_file(*m);
    in.measured_origin = *m;
  }
  if (from) {
    for (const auto& f : split_commas(*from)) {
      in.results.push_back(read_json_file(f));
      in.origins.push_back(f);
    }
  } else {
    const auto sc = strat::load_scenario(*scenario);
    QuestionOptions o;
    o.question = parse_question(a.get("question", "auto"), "--question");
    o.roofline = a.flag("roofline");
    if (auto t = a.get_number("tokens", 0, 1e18)) o.train_tokens = *t;
    in.results.push_back(answer_question(sc, o));
    in.origins.push_back(in.results.back()["provenance"]["command_line"].get<std::string>());
    if (a.flag("plan")) {
      in.results.push_back(answer_plan(sc, o));
      in.origins.push_back(in.results.back()["provenance"]["command_line"].get<std::string>());
    }
  }
  in.generated_at = now_utc();
  in.command_line = command_line("report", argv);
  in.generator =
      std::string("infraplan ") + build_info::kVersion + " (commit " + build_info::kGitCommit + ")";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string text = report::write_report(in, format);
  outputs.set(out, text);
  outputs.commit();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("report written to %s (%s, %s, %.0f ms)\n", out.c_str(),
              format == report::Format::Html ? "HTML" : "Markdown",
              report::fmt_bytes(double(text.size())).c_str(), ms);
  return 0;
}

}  // namespace infraplan::cli
