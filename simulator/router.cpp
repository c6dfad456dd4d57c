#include "simulator/router.hpp"

namespace infraplan::sim::serve {

const char* routing_name(Routing r) {
  switch (r) {
    case Routing::RoundRobin:
      return "round_robin";
    case Routing::LeastOutstanding:
      return "least_outstanding";
    case Routing::PrefixAware:
      return "prefix_aware";
  }
  return "?";
}

int Router::pick(const Request& r, const std::vector<std::int64_t>& outstanding,
                 const std::function<std::int64_t(int)>& cached_blocks) {
  if (n_ <= 1) return 0;
  if (policy_ == Routing::RoundRobin) {
    const int i = next_;
    next_ = (next_ + 1) % n_;
    return i;
  }
  int least = 0;
  for (int i = 1; i < n_; ++i)
    if (outstanding[std::size_t(i)] < outstanding[std::size_t(least)]) least = i;
  if (policy_ == Routing::LeastOutstanding || (r.content_key == 0 && r.session_key == 0) || !cached_blocks)
    return least;
  const double limit = imbalance_ * double(outstanding[std::size_t(least)]) + 4.0;
  int best = -1;
  std::int64_t best_blocks = 0;
  for (int i = 0; i < n_; ++i) {
    if (double(outstanding[std::size_t(i)]) > limit) continue;
    const std::int64_t b = cached_blocks(i);
    if (b > best_blocks || (b == best_blocks && best >= 0 && b > 0 &&
                            outstanding[std::size_t(i)] < outstanding[std::size_t(best)])) {
      best = i;
      best_blocks = b;
    }
  }
  return best >= 0 && best_blocks > 0 ? best : least;
}

}  // namespace infraplan::sim::serve
