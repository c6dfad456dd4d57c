#pragma once
// The serving simulation's event queue. One total order: (time, class, sequence number).
// At equal times, finished steps release their resources first, then KV transfers land, then
// requests arrive, and last, idle instances start their next step — so a step that starts at t
// sees everything that happened at t.
#include <cstdint>
#include <queue>
#include <vector>

namespace infraplan::sim::serve {

enum class EventClass : int { StepDone = 0, KvArrived = 1, Arrival = 2, TryStart = 3 };

struct Event {
  double time_s = 0;
  EventClass cls = EventClass::Arrival;
  std::uint64_t seq = 0;      ///< insertion number, the final tie-break
  int instance = -1;          ///< engine the event concerns
  std::int64_t request = -1;  ///< request id (arrivals, KV transfers)
};

/// True when `a` comes after `b` (for std::priority_queue, which pops the largest).
struct EventAfter {
  bool operator()(const Event& a, const Event& b) const {
    if (a.time_s != b.time_s) return a.time_s > b.time_s;
    if (a.cls != b.cls) return int(a.cls) > int(b.cls);
    return a.seq > b.seq;
  }
};

class EventQueue {
 public:
  void push(double t, EventClass c, int instance, std::int64_t request = -1) {
    q_.push(Event{t, c, next_++, instance, request});
  }
  bool empty() const { return q_.empty(); }
  Event pop() {
    Event e = q_.top();
    q_.pop();
    return e;
  }
  std::size_t size() const { return q_.size(); }

 private:
  std::priority_queue<Event, std::vector<Event>, EventAfter> q_;
  std::uint64_t next_ = 0;
};

}  // namespace infraplan::sim::serve
