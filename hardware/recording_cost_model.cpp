#include "hardware/recording_cost_model.hpp"

#include <algorithm>
#include <vector>

namespace infraplan::hw {

CostEstimate RecordingCostModel::gemm(const GemmShape& s) const {
  CostEstimate e = inner_.gemm(s);
  std::lock_guard<std::mutex> lock(mu_);
  Seen& x = seen_[{int(s.dtype), s.m, s.n, s.k, int(s.layout)}];
  x.calls += double(s.batch);
  x.seconds += e.seconds;
  return e;
}

std::size_t RecordingCostModel::distinct_shapes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.size();
}

Json RecordingCostModel::shapes_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, int>;
  std::vector<std::pair<Key, Seen>> v(seen_.begin(), seen_.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  Json arr = Json::array();
  for (const auto& [key, x] : v)
    arr.push_back({{"dtype", std::string(dtype_name(Dtype(std::get<0>(key))))},
                   {"m", std::get<1>(key)},
                   {"n", std::get<2>(key)},
                   {"k", std::get<3>(key)},
                   {"layout", gemm_layout_name(GemmLayout(std::get<4>(key)))},
                   {"calls", x.calls},
                   {"predicted_seconds", x.seconds}});
  return Json{{"gemm_shapes", arr}};
}

}  // namespace infraplan::hw
