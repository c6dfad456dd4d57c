#include "simulator/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace infraplan::sim::serve {

Json Percentiles::to_json() const {
  auto r = [](double v) { return std::round(v * 1e4) / 1e4; };
  return {{"p50", r(p50)}, {"p90", r(p90)},   {"p95", r(p95)},
          {"p99", r(p99)}, {"mean", r(mean)}, {"max", r(max)}};
}

double quantile_of_sorted(const std::vector<double>& v, double f) {
  const double pos = f * double(v.size() - 1);
  const std::size_t lo = std::size_t(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

Percentiles percentiles(std::vector<double> v, double scale) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) { return quantile_of_sorted(v, f) * scale; };
  p.p50 = q(0.5);
  p.p90 = q(0.9);
  p.p95 = q(0.95);
  p.p99 = q(0.99);
  double s = 0;
  for (double x : v) s += x;
  p.mean = s / double(v.size()) * scale;
  p.max = v.back() * scale;
  return p;
}

// Buckets from the bits of the double: exponent and the top 6 mantissa bits, i.e. 64 buckets
// per power of two (≤ 1.1% relative width), exact and fast.
static constexpr double kBase = 1e-9;
static constexpr int kMantBits = 6;

static std::size_t bucket_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return std::size_t(b >> (52 - kMantBits));
}

static double bucket_mid(std::size_t i) {
  std::uint64_t lo = std::uint64_t(i) << (52 - kMantBits), hi = std::uint64_t(i + 1) << (52 - kMantBits);
  double a, b;
  std::memcpy(&a, &lo, sizeof a);
  std::memcpy(&b, &hi, sizeof b);
  return 0.5 * (a + b);
}

void LogHistogram::add(double x, std::int64_t count) {
  n_ += count;
  sum_ += x * double(count);
  max_ = std::max(max_, x);
  if (x < kBase) {
    zeros_ += count;
    return;
  }
  const std::size_t i = bucket_of(x) - bucket_of(kBase);
  if (i >= buckets_.size()) buckets_.resize(i + 1, 0);
  buckets_[i] += count;
}

double LogHistogram::quantile(double q) const {
  if (n_ == 0) return 0;
  const double target = q * double(n_);
  double acc = double(zeros_);
  if (acc >= target && zeros_ > 0) return 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    acc += double(buckets_[i]);
    if (acc >= target) return std::min(max_, bucket_mid(i + bucket_of(kBase)));
  }
  return max_;
}

Percentiles LogHistogram::summary(double scale) const {
  Percentiles p;
  p.p50 = quantile(0.5) * scale;
  p.p90 = quantile(0.9) * scale;
  p.p95 = quantile(0.95) * scale;
  p.p99 = quantile(0.99) * scale;
  p.mean = mean() * scale;
  p.max = max_ * scale;
  return p;
}

ServingMetrics latency_metrics(const std::vector<RequestRecord>& recs, const Slo& slo) {
  ServingMetrics m;
  m.requests = std::int64_t(recs.size());
  if (recs.empty()) return m;
  std::vector<double> ttft, tpot, e2e, queue;
  double t0 = recs.front().arrival_s, t1 = 0, out_tokens = 0, in_tokens = 0, good = 0;
  for (const auto& r : recs) {
    ttft.push_back(r.ttft_s());
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s());
    e2e.push_back(r.e2e_s());
    queue.push_back(std::max(0.0, r.queue_s()));
    t0 = std::min(t0, r.arrival_s);
    t1 = std::max(t1, r.finish_s);
    out_tokens += double(r.output_tokens);
    in_tokens += double(r.prompt_tokens);
    const bool ok_ttft = slo.ttft_ms <= 0 || r.ttft_s() * 1e3 <= slo.ttft_ms;
    const bool ok_tpot = slo.tpot_ms <= 0 || r.tpot_s() * 1e3 <= slo.tpot_ms;
    good += (ok_ttft && ok_tpot) ? 1 : 0;
  }
  m.ttft_ms = percentiles(ttft, 1e3);
  m.tpot_ms = percentiles(tpot, 1e3);
  m.e2e_ms = percentiles(e2e, 1e3);
  m.queue_ms = percentiles(queue, 1e3);
  m.duration_s = std::max(t1 - t0, 1e-9);
  m.throughput_rps = double(recs.size()) / m.duration_s;
  m.output_tokens_per_s = out_tokens / m.duration_s;
  m.input_tokens_per_s = in_tokens / m.duration_s;
  m.goodput_rps = good / m.duration_s;
  m.slo_attainment = good / double(recs.size());
  return m;
}

Json ServingMetrics::to_json(bool with_series) const {
  auto r = [](double v) { return std::round(v * 1e6) / 1e6; };
  Json j = {{"requests", requests},
            {"duration_s", r(duration_s)},
            {"ttft_ms", ttft_ms.to_json()},
            {"tpot_ms", tpot_ms.to_json()},
            {"e2e_ms", e2e_ms.to_json()},
            {"queue_ms", queue_ms.to_json()},
            {"throughput_rps", r(throughput_rps)},
            {"output_tokens_per_s", r(output_tokens_per_s)},
            {"input_tokens_per_s", r(input_tokens_per_s)},
            {"goodput_rps", r(goodput_rps)},
            {"slo_attainment", r(slo_attainment)}};
  if (steps > 0) {
    j["itl_ms"] = itl_ms.to_json();
    j["preemptions"] = preemptions;
    j["prefix_hit_rate"] = r(prefix_hit_rate);
    j["kv_usage"] = {{"mean", r(mean_kv_usage)}, {"peak", r(peak_kv_usage)}};
    j["busy_fraction"] = r(busy_fraction);
    j["mean_batch_tokens"] = r(mean_batch_tokens);
    j["useful_compute_fraction"] = r(useful_compute_fraction);
    j["steps"] = steps;
  }
  if (!per_class.empty()) {
    Json c = Json::object();
    for (std::size_t i = 0; i < per_class.size(); ++i) c[class_names[i]] = per_class[i].to_json(false);
    j["classes"] = c;
  }
  if (with_series && !series.empty()) {
    Json s = Json::array();
    for (const auto& p : series)
      s.push_back({{"t_s", r(p.t_s)},
                   {"kv_usage", r(p.kv_usage)},
                   {"running", p.running},
                   {"waiting", p.waiting},
                   {"preemptions", p.preemptions},
                   {"prefix_hit_rate", r(p.prefix_hit_rate)}});
    j["series"] = s;
  }
  return j;
}

Json LatencyDistributions::to_json() const {
  auto r = [](const std::vector<double>& v) {
    Json a = Json::array();
    for (double x : v) a.push_back(std::round(x * 1e4) / 1e4);
    return a;
  };
  return {{"levels", levels},    {"ttft_ms", r(ttft_ms)}, {"tpot_ms", r(tpot_ms)},
          {"itl_ms", r(itl_ms)}, {"e2e_ms", r(e2e_ms)},   {"queue_ms", r(queue_ms)}};
}

LatencyDistributions latency_distributions(const std::vector<RequestRecord>& recs, const LogHistogram& itl) {
  LatencyDistributions d;
  for (int i = 0; i <= 200; ++i) {
    d.levels.push_back(double(i) / 200.0);
    if (i == 199) d.levels.push_back(0.999);
  }
  std::vector<double> ttft, tpot, e2e, queue;
  for (const auto& r : recs) {
    ttft.push_back(r.ttft_s());
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s());
    e2e.push_back(r.e2e_s());
    queue.push_back(std::max(0.0, r.queue_s()));
  }
  auto curve = [&](std::vector<double>& v, std::vector<double>& out) {
    if (v.empty()) return;
    std::sort(v.begin(), v.end());
    for (double q : d.levels) out.push_back(quantile_of_sorted(v, q) * 1e3);
  };
  curve(ttft, d.ttft_ms);
  curve(tpot, d.tpot_ms);
  curve(e2e, d.e2e_ms);
  curve(queue, d.queue_ms);
  if (itl.count() > 0)
    for (double q : d.levels) d.itl_ms.push_back(itl.quantile(q) * 1e3);
  return d;
}

std::string requests_csv(const std::vector<RequestRecord>& recs) {
  std::string out =
      "id,class,instance,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_tokens,output_tokens,"
      "cached_tokens,preemptions,ttft_ms,tpot_ms,e2e_ms,queue_ms,max_itl_ms\n";
  char buf[512];
  for (const auto& r : recs) {
    std::snprintf(buf, sizeof buf,
                  "%lld,%d,%d,%.6f,%.6f,%.6f,%.6f,%lld,%lld,%lld,%d,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                  (long long)r.id, r.klass, r.instance, r.arrival_s, r.first_scheduled_s, r.first_token_s,
                  r.finish_s, (long long)r.prompt_tokens, (long long)r.output_tokens,
                  (long long)r.cached_tokens, r.preemptions, r.ttft_s() * 1e3, r.tpot_s() * 1e3,
                  r.e2e_s() * 1e3, std::max(0.0, r.queue_s()) * 1e3, r.max_itl_s * 1e3);
    out += buf;
  }
  return out;
}

}  // namespace infraplan::sim::serve
