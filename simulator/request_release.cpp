#include "simulator/request_release.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"

namespace infraplan::sim::serve {

RequestRelease::RequestRelease(const std::vector<Request>& reqs, const WorkloadSpec& w)
    : next_turns_(reqs.size()), turn_think_s_(reqs.size(), 0.0), pool_of_(reqs.size(), -1) {
  pools_.resize(w.classes.size());
  for (std::size_t c = 0; c < w.classes.size(); ++c) {
    pools_[c].concurrency = w.classes[c].arrival.concurrency;
    pools_[c].start_s = w.classes[c].arrival.start_s;
    pools_[c].think_time_s = w.classes[c].arrival.think_time_s;
  }
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = reqs[i];
    turn_think_s_[i] = r.think_time_s;
    if (r.closed_loop >= 0) {
      if (std::size_t(r.closed_loop) >= w.classes.size() ||
          !w.classes[std::size_t(r.closed_loop)].arrival.closed())
        throw Error("request " + std::to_string(r.id) + " belongs to closed-loop class " +
                    std::to_string(r.closed_loop) + ", which the workload does not define as closed");
      pool_of_[i] = r.closed_loop;
    }
    if (r.after_request >= 0) {
      if (r.after_request >= std::int64_t(i))
        throw Error("request " + std::to_string(r.id) + " follows request " +
                    std::to_string(r.after_request) + ", which is not an earlier request");
      next_turns_[std::size_t(r.after_request)].push_back(r.id);
    } else if (r.closed_loop >= 0) {
      pools_[std::size_t(r.closed_loop)].waiting.push_back(r.id);
    } else {
      initial_.push_back({r.id, r.arrival_s});
    }
  }
  for (Pool& p : pools_)
    for (int k = 0; k < p.concurrency && !p.waiting.empty(); ++k) {
      initial_.push_back({p.waiting.front(), p.start_s});
      p.waiting.pop_front();
    }
  std::sort(initial_.begin(), initial_.end(), [](const Release& a, const Release& b) { return a.id < b.id; });
}

std::vector<Release> RequestRelease::initial() const { return initial_; }

std::vector<Release> RequestRelease::on_finish(std::int64_t id, double now) {
  std::vector<Release> out;
  const auto& next = next_turns_.at(std::size_t(id));
  for (std::int64_t d : next) out.push_back({d, now + turn_think_s_[std::size_t(d)]});
  const int pool = pool_of_[std::size_t(id)];
  if (next.empty() && pool >= 0) {  // a conversation ended: its client sends the next one
    Pool& p = pools_[std::size_t(pool)];
    if (!p.waiting.empty()) {
      out.push_back({p.waiting.front(), now + p.think_time_s});
      p.waiting.pop_front();
    }
  }
  return out;
}

std::int64_t RequestRelease::queued() const {
  std::int64_t n = 0;
  for (const Pool& p : pools_) n += std::int64_t(p.waiting.size());
  return n;
}

}  // namespace infraplan::sim::serve
