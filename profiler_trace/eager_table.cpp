#include "profiler_trace/eager_table.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "hardware/framework_costs.hpp"
#include "profiler_trace/composites.hpp"

namespace infraplan::ptrace {

double EagerPoint::median() const {
  if (seconds.empty()) return NAN;
  std::vector<double> v = seconds;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

EagerCalls eager_calls(const TraceStep& step, const std::vector<ClassifiedWork>& work) {
  // (type, op instance) → elements and summed kernel seconds.
  struct Call {
    double elements = 0, seconds = 0;
  };
  std::map<std::pair<std::string, int>, Call> calls;
  for (const auto& w : work) {
    if (w.phase == Phase::Optimizer || w.gemm || w.attention) continue;
    if (w.category == KernelCategory::Communication || w.category == KernelCategory::Gemm ||
        w.category == KernelCategory::Attention || w.category == KernelCategory::Optimizer)
      continue;
    if (!w.type.empty() && w.unit_op >= 0 && w.elements > 0) {
      auto& c = calls[{w.type, w.unit_op}];
      c.elements = w.elements;
      c.seconds += w.seconds();
    }
    if (!w.composite_type.empty() && w.composite_op >= 0 && w.composite_elements > 0) {
      // Backward kernels of one composite's backward share the forward op's instance; forward
      // and backward types differ, so they stay apart.
      auto& c = calls[{w.composite_type, w.composite_op}];
      c.elements = w.composite_elements;
      c.seconds += w.seconds();
    }
  }
  EagerCalls out;
  auto add = [&](const std::string& type, double elements, double seconds) {
    auto& pts = out[type];
    auto it =
        std::find_if(pts.begin(), pts.end(), [&](const EagerPoint& p) { return p.elements == elements; });
    if (it == pts.end()) {
      pts.push_back({elements, {}});
      it = pts.end() - 1;
    }
    it->seconds.push_back(seconds);
  };
  for (const auto& [key, c] : calls) {
    add(key.first, c.elements, c.seconds);
    // The embedding's backward goes by the name the framework table gives it.
    if (key.first.rfind("embedding_", 0) == 0 && key.first.size() > 14 &&
        key.first.compare(key.first.size() - 4, 4, "_bwd") == 0)
      add("embedding_bwd_" + key.first.substr(10, key.first.size() - 14), c.elements, c.seconds);
  }
  for (const auto& c : composite_calls(step, work))
    if (c.elements > 0 && c.seconds > 0) add(c.type, c.elements, c.seconds);
  for (auto& [type, pts] : out)
    std::sort(pts.begin(), pts.end(),
              [](const EagerPoint& a, const EagerPoint& b) { return a.elements < b.elements; });
  return out;
}

namespace {

/// Bytes B with memory_bound(B) = t (bisection in log B; the launch floor gives the smallest).
double bytes_for(const hw::CostModel& cost, double t) {
  double lo = 1, hi = 1e14;
  if (cost.memory_bound(lo).seconds >= t) return lo;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    (cost.memory_bound(mid).seconds < t ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

}  // namespace

Json merge_eager_table(const hw::Profile& base, const hw::CostModel& cost, const Json& base_section,
                       const EagerCalls& calls) {
  std::set<double> axis_set;
  if (base.framework)
    for (double e : base.framework->elementwise_elements) axis_set.insert(e);
  for (const auto& [type, pts] : calls)
    for (const auto& p : pts) axis_set.insert(p.elements);
  const std::vector<double> axis(axis_set.begin(), axis_set.end());

  Json ops = Json::object();
  // Base rows of types the trace did not see: their values on the new axis (NaN elsewhere).
  if (base.framework)
    for (const auto& [type, secs] : base.framework->elementwise_seconds) {
      if (calls.count(type)) continue;
      Json row = Json::array();
      for (double e : axis) {
        auto it = std::find(base.framework->elementwise_elements.begin(),
                            base.framework->elementwise_elements.end(), e);
        const double v = it == base.framework->elementwise_elements.end()
                             ? NAN
                             : secs[std::size_t(it - base.framework->elementwise_elements.begin())];
        row.push_back(std::isfinite(v) ? Json(v) : Json(nullptr));
      }
      Json entry = {{"seconds", row}, {"source", "base"}};
      if (base_section.is_object() && base_section.contains("ops") && base_section["ops"].contains(type)) {
        const Json& b = base_section["ops"][type];
        if (b.contains("what")) entry["what"] = b["what"];
      }
      ops[type] = entry;
    }
  for (const auto& call : calls) {
    const auto& type = call.first;
    const auto& pts = call.second;  // named references: the lambda below captures pts
    const bool in_base = base.framework && base.framework->elementwise_seconds.count(type);
    const double lo = pts.front().elements, hi = pts.back().elements;
    auto nearest = [&](double e) -> const EagerPoint& { return e < lo ? pts.front() : pts.back(); };
    Json row = Json::array();
    for (double e : axis) {
      auto own = std::find_if(pts.begin(), pts.end(), [&](const EagerPoint& p) { return p.elements == e; });
      double v = NAN;
      if (own != pts.end()) {
        v = own->median();
      } else if (e < lo || e > hi) {
        const EagerPoint& p = nearest(e);
        if (in_base) {
          auto at_e = hw::eager_op_seconds(base, type, e),
               at_p = hw::eager_op_seconds(base, type, p.elements);
          if (at_e && at_p && *at_p > 0) v = *at_e * p.median() / *at_p;
        } else {
          const double beta = bytes_for(cost, p.median()) / p.elements;
          v = cost.memory_bound(beta * e).seconds;
        }
      }
      row.push_back(std::isfinite(v) && v > 0 ? Json(v) : Json(nullptr));
    }
    Json calls_json = Json::array();
    for (const auto& p : pts)
      calls_json.push_back(
          {{"elements", p.elements}, {"calls", p.seconds.size()}, {"median_seconds", p.median()}});
    ops[type] = {{"seconds", row},
                 {"source", in_base ? "trace; base curve scaled to the trace outside its range"
                                    : "trace; memory-bound curve fit to the trace outside its range"},
                 {"traced", calls_json}};
  }
  Json out = {{"elements", axis}, {"ops", ops}};
  out["method"] =
      "traced calls (median per element count) at their element counts; outside the traced range the base "
      "table's curve scaled to the nearest traced point, or for kernel types the base lacks the memory-bound "
      "curve over an effective traffic fit to it";
  return out;
}

}  // namespace infraplan::ptrace
