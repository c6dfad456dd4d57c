#pragma once
// Router: picks the instance (replica, or prefill instance under PD) for each request.
// round_robin cycles; least_outstanding takes the instance with the fewest unfinished requests
// (lowest index on ties); prefix_aware takes the instance whose prefix cache holds the most of
// the request's leading blocks, unless it is overloaded (more than `imbalance` × the least
// loaded + 4 outstanding), and falls back to least_outstanding.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simulator/sequence.hpp"

namespace infraplan::sim::serve {

enum class Routing { RoundRobin, LeastOutstanding, PrefixAware };
const char* routing_name(Routing r);

class Router {
 public:
  Router(Routing policy, int instances, double imbalance = 1.5)
      : policy_(policy), n_(instances), imbalance_(imbalance) {}
  /// `outstanding[i]`: unfinished requests on instance i; `cached_blocks(i)`: leading blocks of
  /// the request found in instance i's prefix cache (used by prefix_aware only).
  int pick(const Request& r, const std::vector<std::int64_t>& outstanding,
           const std::function<std::int64_t(int)>& cached_blocks);

 private:
  Routing policy_;
  int n_;
  double imbalance_;
  int next_ = 0;
};

}  // namespace infraplan::sim::serve
