#include "simulator/chrome_trace.hpp"

#include <cmath>

namespace infraplan::sim {

static double us(double s) { return std::round(s * 1e9) / 1e3; }  // ns precision, µs unit

void ChromeTrace::name_process(int pid, const std::string& name) {
  meta_.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
  meta_.push_back({{"ph", "M"},
                   {"name", "process_sort_index"},
                   {"pid", pid},
                   {"tid", 0},
                   {"args", {{"sort_index", pid}}}});
}

void ChromeTrace::name_thread(int pid, int tid, const std::string& name) {
  meta_.push_back(
      {{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
}

void ChromeTrace::span(int pid, int tid, const std::string& name, const std::string& cat, double start_s,
                       double dur_s, Json args) {
  if (events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  Json e = {{"ph", "X"},  {"name", name},      {"cat", cat},      {"pid", pid},
            {"tid", tid}, {"ts", us(start_s)}, {"dur", us(dur_s)}};
  if (!args.is_null()) e["args"] = std::move(args);
  events_.push_back(std::move(e));
}

void ChromeTrace::counter(int pid, const std::string& name, double t_s, Json values) {
  if (events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  events_.push_back(
      {{"ph", "C"}, {"name", name}, {"pid", pid}, {"tid", 0}, {"ts", us(t_s)}, {"args", std::move(values)}});
}

std::string ChromeTrace::str() const {
  Json all = Json::array();
  for (const auto& m : meta_) all.push_back(m);
  for (const auto& e : events_) all.push_back(e);
  Json j = {{"traceEvents", std::move(all)},
            {"displayTimeUnit", "ms"},
            {"otherData", {{"dropped_events", dropped_}}}};
  return j.dump();
}

}  // namespace infraplan::sim
