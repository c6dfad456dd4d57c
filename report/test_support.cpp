#include "report/test_support.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <stdexcept>

#include "cli/scenario_question.hpp"
#include "strategies/scenario.hpp"

namespace infraplan::report::testing {

namespace {

std::string src(const std::string& rel) { return std::string(INFRAPLAN_SOURCE_DIR) + "/" + rel; }

// The pages name the scenario as a command run from the repository root would (a relative path), so
// they (and the screenshots in docs/img) do not depend on where the checkout is.
void relative_to_source(Json& result) {
  const std::string root = std::string(INFRAPLAN_SOURCE_DIR) + "/";
  if (!result.contains("provenance")) return;
  for (const char* key : {"scenario_file", "command_line"}) {
    auto it = result["provenance"].find(key);
    if (it == result["provenance"].end() || !it->is_string()) continue;
    std::string s = it->get<std::string>();
    for (std::size_t p; (p = s.find(root)) != std::string::npos;) s.erase(p, root.size());
    *it = s;
  }
}

// Measured values for the validation fixture: the step time of GPT-2 124M (micro-batch 16, seq 1024,
// no checkpointing, AMP bf16) measured on one H200 (docs/data/h200_pytorch_train.json), the
// configuration scenarios/train_gpt2_124m_1xh200.json describes.
Json measured_gpt2_124m_h200(std::string& origin) {
  origin = "docs/data/h200_pytorch_train.json";
  const Json data = read_json_file(src(origin));
  for (const auto& c : data.at("configs")) {
    if (c.at("model") != "gpt2-124m" || c.at("micro_batch") != 16 || c.at("checkpointing") != "none") continue;
    const Json run = data.at("runs").at(c.at("run").get<std::string>());
    return {{"source", "one NVIDIA H200, PyTorch " + data.at("torch_version").get<std::string>() + ", " +
                           run.at("command").get<std::string>() + ", " + run.at("date").get<std::string>() +
                           ", median of " + std::to_string(c.at("timed_steps").get<int>()) + " steps"},
            {"values",
             {{"iteration_time_s", c.at("step_seconds_median")}, {"tokens_per_s", c.at("tokens_per_second")}}}};
  }
  throw std::runtime_error("docs/data/h200_pytorch_train.json has no gpt2-124m micro-batch 16 row");
}

Fixture make(const std::string& name, const std::string& scenario, cli::Question q, bool plan) {
  Fixture f;
  f.name = name;
  const auto sc = strat::load_scenario(src(scenario));
  cli::QuestionOptions o;
  o.question = q;
  o.top = 3;
  o.serve_tps = {1, 2};  // a small serving search keeps the tests quick
  o.probe_requests = 60;
  if (!plan) {
    f.results.push_back(cli::answer_question(sc, o));
  } else {
    f.results.push_back(cli::answer_plan(sc, o));
  }
  relative_to_source(f.results.back());
  f.origins.push_back(scenario);
  return f;
}

}  // namespace

const std::vector<std::string>& fixture_names() {
  static const std::vector<std::string> n = {"memory-train",   "memory-serve", "simulate-train",
                                             "simulate-serve", "plan-train",   "plan-serve",   "validation"};
  return n;
}

const Fixture& fixture(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, Fixture> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  Fixture f;
  if (name == "memory-train")
    f = make(name, "scenarios/memory_llama3_70b_dgx_h100x8.json", cli::Question::Memory, false);
  else if (name == "memory-serve")
    f = make(name, "scenarios/memory_llama2_70b_2xa100.json", cli::Question::Auto, false);
  else if (name == "simulate-train")
    f = make(name, "scenarios/train_llama2_70b_64xh100.json", cli::Question::Auto, false);
  else if (name == "simulate-serve")
    f = make(name, "scenarios/serve_pd_disaggregated.json", cli::Question::Auto, false);
  else if (name == "plan-train")
    f = make(name, "report/testdata/plan_train_small.json", cli::Question::Auto, true);
  else if (name == "plan-serve")
    f = make(name, "report/testdata/plan_serve_small.json", cli::Question::Auto, true);
  else if (name == "validation") {
    f = make(name, "scenarios/train_gpt2_124m_1xh200.json", cli::Question::Auto, false);
    f.measured = measured_gpt2_124m_h200(f.measured_origin);
  } else
    throw std::invalid_argument("no fixture " + name);
  return cache.emplace(name, std::move(f)).first->second;
}

ReportInputs inputs_for(const Fixture& f) {
  ReportInputs in;
  in.results = f.results;
  in.origins = f.origins;
  in.measured = f.measured;
  in.measured_origin = f.measured_origin;
  in.generated_at = "2026-01-01T00:00:00Z";
  in.command_line = "infraplan report (test)";
  in.generator = "infraplan (test)";
  return in;
}

std::vector<std::string> section_ids(const std::string& html) {
  std::vector<std::string> ids;
  static const std::regex re("<section id=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it)
    ids.push_back((*it)[1]);
  return ids;
}

std::vector<std::string> svg_elements(const std::string& html) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = html.find("<svg", pos)) != std::string::npos) {
    const std::size_t end = html.find("</svg>", pos);
    if (end == std::string::npos) break;
    out.push_back(html.substr(pos, end + 6 - pos));
    pos = end + 6;
  }
  return out;
}

int svg_marks(const std::string& svg) {
  static const std::regex re("<(rect|polyline|polygon|circle|line)[ >]");
  return int(std::distance(std::sregex_iterator(svg.begin(), svg.end(), re), std::sregex_iterator()));
}

std::vector<Traced> traced_values(const std::string& html) {
  std::vector<Traced> out;
  static const std::regex re(
      "<span class=\"v\" data-result=\"([0-9]+)\" data-key=\"([^\"]*)\" "
      "data-value=\"([^\"]*)\">([^<]*)</span>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it) {
    Traced t;
    t.result = std::stoi((*it)[1]);
    t.key = (*it)[2];
    t.value = std::strtod(std::string((*it)[3]).c_str(), nullptr);
    t.text = (*it)[4];
    out.push_back(t);
  }
  return out;
}

std::string check_shown(const Traced& t, double v) {
  // Strip thin spaces and a leading "$"; split number and unit.
  std::string s;
  for (std::size_t i = 0; i < t.text.size(); ++i) {
    if (t.text.compare(i, 3, "\xE2\x80\x89") == 0) {
      i += 2;
      continue;
    }
    if (t.text[i] == '$' || t.text[i] == '+') continue;
    s += t.text[i];
  }
  char* end = nullptr;
  const double shown = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return "no number in '" + t.text + "'";
  std::string num(s.c_str(), std::size_t(end - s.c_str())), unit(end);
  while (!unit.empty() && unit[0] == ' ') unit.erase(0, 1);
  // Half a unit of the last digit shown.
  int decimals = 0;
  std::string mant = num.substr(0, num.find_first_of("eE"));
  if (auto dot = mant.find('.'); dot != std::string::npos) decimals = int(mant.size() - dot - 1);
  int exp10 = 0;
  if (auto e = num.find_first_of("eE"); e != std::string::npos) exp10 = std::stoi(num.substr(e + 1));
  const double half = 0.5 * std::pow(10.0, exp10 - decimals);
  // Scale from the unit shown to the JSON's unit.
  // Keys in milliseconds end in _ms or sit under one ("/metrics/ttft_ms/p90").
  const bool ms_key = (t.key.size() > 3 && t.key.compare(t.key.size() - 3, 3, "_ms") == 0) ||
                      t.key.find("_ms/") != std::string::npos;
  static const std::map<std::string, double> time_s = {{"d", 86400}, {"h", 3600},  {"s", 1},
                                                       {"ms", 1e-3}, {"µs", 1e-6}, {"ns", 1e-9}};
  static const std::map<std::string, double> bytes = {
      {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  static const std::map<std::string, double> flops = {
      {"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};
  double scale = 1;
  if (auto it = time_s.find(unit); it != time_s.end()) {
    scale = it->second / (ms_key ? 1e-3 : 1.0);
  } else if (auto b = bytes.find(unit); b != bytes.end()) {
    scale = b->second;
  } else if (auto f = flops.find(unit); f != flops.end()) {
    scale = f->second;
  } else if (unit == "%") {
    scale = 0.01;
  }
  const double err = std::fabs(shown * scale - v);
  if (err > half * scale * (1 + 1e-9) + 1e-12 * std::fabs(v))
    return "'" + t.text + "' at " + t.key + " shows " + std::to_string(shown * scale) + ", JSON has " +
           std::to_string(v);
  return "";
}

std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

}  // namespace infraplan::report::testing
