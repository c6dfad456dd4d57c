#pragma once
// RequestRelease: when each request of a workload is sent — the client side of a serving run,
// shared by the simulated driver (serving_sim) and a real-time one (a GPU backend's benchmark).
//
// Three rules:
// - open loop: a request is sent at its arrival_s;
// - conversations: turn n + 1 is sent think_time_s after turn n finished (Request::after_request);
// - closed loop (workload arrival type "closed"): each class keeps `concurrency` requests (or
//   conversations) in flight. The first `concurrency` are sent at the class's start_s; whenever
//   one finishes (a conversation: its last turn), the class's next one is sent the class's
//   think_time_s later. With think_time_s = 0 exactly `concurrency` requests are in flight from
//   the start until the class runs out of requests.
// Asking is split from doing: initial() only answers; on_finish() consumes the closed-loop queues.
#include <cstdint>
#include <deque>
#include <vector>

#include "simulator/sequence.hpp"
#include "simulator/workload.hpp"

namespace infraplan::sim::serve {

/// One request to send: its id and the time it is sent, seconds from the start.
struct Release {
  std::int64_t id = -1;
  double time_s = 0;
};

class RequestRelease {
 public:
  /// `reqs`: ids 0..n−1 in order; `w`: the workload they came from (closed-loop concurrency and
  /// think time per class). Throws infraplan::Error when a request names a closed-loop class the
  /// workload does not define.
  RequestRelease(const std::vector<Request>& reqs, const WorkloadSpec& w);

  /// The requests sent without waiting for any other (open-loop arrivals, first turns of
  /// open-loop conversations and each closed-loop class's first `concurrency`), in id order.
  std::vector<Release> initial() const;
  /// Request `id` finished at `now`: the requests this sends (its next turn, or the next
  /// request of its closed-loop class).
  std::vector<Release> on_finish(std::int64_t id, double now);

  /// Closed-loop requests not sent yet (all classes).
  std::int64_t queued() const;

 private:
  struct Pool {  // one closed-loop class
    int concurrency = 1;
    double start_s = 0, think_time_s = 0;
    std::deque<std::int64_t> waiting;  // conversation heads not sent yet, in id order
  };
  std::vector<std::vector<std::int64_t>> next_turns_;  // by request id
  std::vector<double> turn_think_s_;                   // by request id: pause before this turn
  std::vector<int> pool_of_;                           // by request id: closed-loop class or -1
  std::vector<Pool> pools_;                            // by class index (unused for open classes)
  std::vector<Release> initial_;                       // computed by the constructor
};

}  // namespace infraplan::sim::serve
