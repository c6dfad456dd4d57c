#pragma once
// The fit / validation split of the PyTorch GEMM runs (bench/pytorch/gemm_layouts.py files): the
// distinct linear weights [out, in] of a run, sorted, every other one (the second, fourth, …) is the
// validation half; its shapes, in every layout and token count, are never looked at for calibration.
#include <cstdint>
#include <set>
#include <utility>

#include "common/json_util.hpp"

namespace infraplan::hw {

using LinearWeight = std::pair<std::int64_t, std::int64_t>;  ///< [out, in]

/// The linear layer's weight of one shape entry ("linear": {"out", "in"}).
inline LinearWeight linear_weight(const Json& shape) {
  return {shape.at("linear").at("out").get<std::int64_t>(), shape.at("linear").at("in").get<std::int64_t>()};
}

/// The validation half of a run's weights.
inline std::set<LinearWeight> validation_weights(const Json& run) {
  std::set<LinearWeight> all, val;
  for (const auto& e : run.at("shapes")) all.insert(linear_weight(e));
  bool odd = false;
  for (const auto& w : all) {
    if (odd) val.insert(w);
    odd = !odd;
  }
  return val;
}

}  // namespace infraplan::hw
