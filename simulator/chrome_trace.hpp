#pragma once
// ChromeTrace: a writer for the Chrome trace-event JSON format (chrome://tracing, Perfetto UI).
// Processes and threads are named lanes (a GPU, a replica, a link); events are complete spans
// ("X") and counters ("C"). Times are in seconds here and written in microseconds. Events past
// `max_events` are dropped and counted, so a long simulation cannot produce an unbounded file.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_util.hpp"

namespace infraplan::sim {

class ChromeTrace {
 public:
  explicit ChromeTrace(std::size_t max_events = 500000) : max_events_(max_events) {}

  /// Names process `pid` (and optionally thread `tid` inside it).
  void name_process(int pid, const std::string& name);
  void name_thread(int pid, int tid, const std::string& name);
  /// A span [start_s, start_s + dur_s) on lane (pid, tid).
  void span(int pid, int tid, const std::string& name, const std::string& cat, double start_s, double dur_s,
            Json args = Json());
  /// A counter sample: series `name` of process `pid` takes `values` at `t_s`.
  void counter(int pid, const std::string& name, double t_s, Json values);

  std::size_t size() const { return events_.size(); }
  std::size_t dropped() const { return dropped_; }
  /// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
  std::string str() const;

 private:
  std::size_t max_events_;
  std::size_t dropped_ = 0;
  std::vector<Json> meta_;
  std::vector<Json> events_;
};

}  // namespace infraplan::sim
