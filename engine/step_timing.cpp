#include "engine/step_timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace infraplan::engine {

namespace {

// The q-quantile of ascending, non-empty `v` (nearest rank).
double quantile(const std::vector<double>& v, double q) {
  return v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))];
}

}  // namespace

Json HostFit::to_json() const {
  auto r = [](double v) { return std::round(v * 100.0) / 100.0; };
  return {{"steps", steps},          {"intercept_us", r(intercept_us)}, {"per_seq_us", r(per_seq_us)},
          {"rmse_us", r(rmse_us)},   {"mean_host_us", r(mean_host_us)}, {"p10_us", r(p10_us)},
          {"p50_us", r(p50_us)},     {"p90_us", r(p90_us)},             {"min_seqs", min_seqs},
          {"max_seqs", max_seqs}};
}

HostFit StepTimingLog::host_fit(bool graph, double outlier_s) const {
  std::vector<const StepTiming*> use;
  for (const StepTiming& t : steps_)
    if (t.graph == graph && t.seqs > 0 && std::isfinite(t.host_s) && t.host_s >= 0 && t.host_s <= outlier_s)
      use.push_back(&t);
  HostFit f;
  f.steps = std::int64_t(use.size());
  if (use.empty()) return f;
  double sx = 0, sy = 0;
  f.min_seqs = use.front()->seqs;
  f.max_seqs = use.front()->seqs;
  std::vector<double> ys;
  for (const StepTiming* t : use) {
    sx += t->seqs;
    sy += t->host_s * 1e6;
    ys.push_back(t->host_s * 1e6);
    f.min_seqs = std::min(f.min_seqs, t->seqs);
    f.max_seqs = std::max(f.max_seqs, t->seqs);
  }
  const double n = double(use.size()), mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const StepTiming* t : use) {
    sxx += (t->seqs - mx) * (t->seqs - mx);
    sxy += (t->seqs - mx) * (t->host_s * 1e6 - my);
  }
  f.per_seq_us = use.size() >= 3 && sxx > 0 ? sxy / sxx : 0;
  f.intercept_us = my - f.per_seq_us * mx;
  double ss = 0;
  for (const StepTiming* t : use) {
    const double e = t->host_s * 1e6 - (f.intercept_us + f.per_seq_us * t->seqs);
    ss += e * e;
  }
  f.rmse_us = std::sqrt(ss / n);
  f.mean_host_us = my;
  std::sort(ys.begin(), ys.end());
  f.p10_us = quantile(ys, 0.1);
  f.p50_us = quantile(ys, 0.5);
  f.p90_us = quantile(ys, 0.9);
  return f;
}

void StepTimingLog::predict(sim::serve::ExecutionBackend& model) {
  sim::serve::BatchShape b;
  for (StepTiming& t : steps_) {
    b.items = t.items;
    t.predicted_gpu_s = model.step(b).total_s;
  }
}

std::string StepTimingLog::csv() const {
  std::string s = "start_s,seqs,tokens,prefill_seqs,context_tokens,max_context,graph,host_us,gpu_us,predicted_gpu_us\n";
  char line[200];
  for (const StepTiming& t : steps_) {
    long long ctx = 0, max_ctx = 0;
    for (const auto& it : t.items) {
      ctx += it.context;
      max_ctx = std::max<long long>(max_ctx, it.context);
    }
    std::snprintf(line, sizeof line, "%.6f,%d,%lld,%d,%lld,%lld,%d,%.1f,%.1f,", t.start_s, t.seqs, (long long)t.tokens,
                  t.prefill_seqs, ctx, max_ctx, t.graph ? 1 : 0, t.host_s * 1e6, t.gpu_s * 1e6);
    s += line;
    if (t.predicted_gpu_s >= 0) {
      std::snprintf(line, sizeof line, "%.1f", t.predicted_gpu_s * 1e6);
      s += line;
    }
    s += "\n";
  }
  return s;
}

namespace {

// Predicted / measured GPU time of the steps `keep` selects: median, p10, p90, count.
Json ratio_summary(const std::vector<StepTiming>& steps, const std::function<bool(const StepTiming&)>& keep) {
  std::vector<double> r;
  for (const StepTiming& t : steps)
    if (t.predicted_gpu_s >= 0 && t.gpu_s > 0 && keep(t)) r.push_back(t.predicted_gpu_s / t.gpu_s);
  if (r.empty()) return Json();
  std::sort(r.begin(), r.end());
  auto pct = [&](double q) { return std::round(quantile(r, q) * 1e4) / 1e4; };
  return {{"steps", r.size()}, {"p10", pct(0.1)}, {"median", pct(0.5)}, {"p90", pct(0.9)}};
}

}  // namespace

Json StepTimingLog::summary_json() const {
  Json j = {{"graph_steps", host_fit(true).to_json()}, {"eager_steps", host_fit(false).to_json()}};
  const bool predicted = std::any_of(steps_.begin(), steps_.end(), [](const StepTiming& t) { return t.predicted_gpu_s >= 0; });
  if (!predicted) return j;
  Json m = Json::object();
  const std::vector<std::pair<int, int>> bands = {{1, 1}, {2, 8}, {9, 32}, {33, 128}, {129, 1 << 30}};
  for (const bool g : {true, false}) {
    Json k = Json::object();
    for (const auto& band : bands) {
      const int lo = band.first, hi = band.second;  // named copies: lambdas capture them (clang 14)
      Json r = ratio_summary(steps_, [&](const StepTiming& t) { return t.graph == g && t.seqs >= lo && t.seqs <= hi; });
      if (!r.is_null()) k[std::to_string(lo) + (hi > lo ? "-" + (hi < (1 << 30) ? std::to_string(hi) : std::string("")) : "")] = r;
    }
    Json all = ratio_summary(steps_, [&](const StepTiming& t) { return t.graph == g; });
    if (!all.is_null()) k["all"] = all;
    m[g ? "graph_steps" : "eager_steps"] = k;
  }
  j["step_model"] = {{"what", "predicted / measured GPU time per step (the simulator's step model, host work excluded)"},
                     {"ratios", m}};
  return j;
}

}  // namespace infraplan::engine
