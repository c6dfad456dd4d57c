// Serving simulation section: latency distributions against the SLOs, throughput vs goodput,
// engine state over time, per-instance load, KV transfers, prefix cache and preemptions.
#include <algorithm>
#include <cmath>

#include "report/format.hpp"
#include "report/palette.hpp"
#include "report/sections.hpp"
#include "report/svg_chart.hpp"

namespace infraplan::report {

namespace {

constexpr std::size_t kSeriesBins = 300;

struct Metric {
  const char* key;
  const char* label;
};
constexpr Metric kLatencies[] = {{"ttft_ms", "time to first token (TTFT)"},
                                 {"tpot_ms", "time per output token (TPOT)"},
                                 {"itl_ms", "inter-token latency (ITL)"},
                                 {"e2e_ms", "end-to-end latency"},
                                 {"queue_ms", "queueing before the first step"}};

// A CDF series from the result's quantile curve: x = latency, y = share of requests.
svg::Series cdf_series(const ResultView& r, const std::string& key, const std::string& name, int color) {
  svg::Series s;
  s.name = name;
  s.color = series_color(color);
  const auto& lv = r.at("/distributions/levels");
  const auto& v = r.at("/distributions/" + key);
  for (std::size_t i = 0; i < std::min(lv.size(), v.size()); ++i) {
    s.x.push_back(v[i].get<double>());
    s.y.push_back(lv[i].get<double>());
  }
  return s;
}

bool wide(const svg::Series& a) {
  double lo = 1e300, hi = 0;
  for (double x : a.x)
    if (x > 0) lo = std::min(lo, x), hi = std::max(hi, x);
  return hi > 0 && hi / lo > 200;
}

void cdf_figure(Section& s, const ResultView& r, const std::string& title,
                const std::vector<std::pair<std::string, std::string>>& keys, double slo,
                const std::string& slo_name) {
  svg::LineChart c;
  c.title = title;
  c.y.title = "share of requests (%)";
  c.y.min = 0, c.y.max = 1;
  c.y.tick_format = [](double v) { return svg::tick_label(v * 100); };
  c.x.title = "milliseconds";
  int color = 0;
  for (const auto& [key, name] : keys) {
    if (!r.has("/distributions/" + key)) {
      ++color;
      continue;
    }
    c.series.push_back(cdf_series(r, key, name, color++));
  }
  if (c.series.empty()) return;
  // Positive values spread over more than two decades read better on a log axis.
  bool log = false;
  for (const auto& x : c.series) log = log || wide(x);
  if (log) {
    c.x.log = true;
    c.x.title = "milliseconds (log scale)";
    for (auto& x : c.series)
      for (auto& v : x.x) v = std::max(v, 1e-3);
  }
  if (slo > 0) c.refs.push_back({slo, slo_name + " SLO " + fmt_ms(slo), true, kReferenceColor});
  std::string cap =
      "Cumulative distribution over all requests: a point (x, y) says y% of requests took at most x.";
  if (slo > 0) cap += " Requests left of the dashed line meet the " + slo_name + " target.";
  s.blocks.push_back(Figure{title, svg::line_chart(c), cap});
}

std::vector<double> series_of(const Json& series, const char* key, double scale = 1) {
  std::vector<double> v;
  v.reserve(series.size());
  for (const auto& p : series) v.push_back(p.value(key, 0.0) * scale);
  return v;
}

svg::Series binned_series(const std::vector<double>& t, const std::vector<double>& y, const std::string& name,
                          std::string color, bool band) {
  const Binned b = bin_series(t, y, kSeriesBins);
  svg::Series s;
  s.name = name;
  s.color = std::move(color);
  s.x = b.x;
  s.y = b.mean;
  if (band && b.x.size() < t.size()) s.low = b.min, s.high = b.max;
  return s;
}

void time_series_figures(Section& s, const ResultView& r) {
  if (!r.has("/metrics/series") || r.at("/metrics/series").empty()) return;
  const auto& series = r.at("/metrics/series");
  const auto t = series_of(series, "t_s");
  const bool binned = t.size() > kSeriesBins;
  const std::string how = binned ? " Sampled every " + fmt_seconds(t.size() > 1 ? t[1] - t[0] : 0) +
                                       " of simulated time, " + fmt_int((long long)t.size()) +
                                       " samples binned into " + std::to_string(kSeriesBins) +
                                       " (line: bin mean, band: bin minimum to maximum)."
                                 : " One point per sample of the engine state.";
  {
    svg::LineChart c;
    c.title = "KV cache in use over time";
    c.x.title = "simulated time (s)";
    c.y.title = "KV blocks in use (%)";
    c.y.min = 0, c.y.max = 1;
    c.y.tick_format = [](double v) { return svg::tick_label(v * 100); };
    c.series.push_back(binned_series(t, series_of(series, "kv_usage"), "KV use (mean over instances)",
                                     series_color(0), true));
    c.height = 300;
    s.blocks.push_back(
        Figure{c.title, svg::line_chart(c), "Share of KV-cache blocks holding sequences." + how});
  }
  {
    svg::LineChart c;
    c.title = "Requests running and waiting over time";
    c.x.title = "simulated time (s)";
    c.y.title = "requests per instance";
    c.series.push_back(
        binned_series(t, series_of(series, "running"), "running (in the batch)", series_color(0), true));
    c.series.push_back(
        binned_series(t, series_of(series, "waiting"), "waiting (queued)", series_color(1), true));
    c.height = 300;
    s.blocks.push_back(
        Figure{c.title, svg::line_chart(c),
               "Mean over instances of the sequences in the running batch and in the queue." + how});
  }
  const auto hits = series_of(series, "prefix_hit_rate");
  const auto pre_n = series_of(series, "preemptions");
  const bool any = std::any_of(hits.begin(), hits.end(), [](double v) { return v > 0; }) ||
                   std::any_of(pre_n.begin(), pre_n.end(), [](double v) { return v > 0; });
  if (!any) {
    s.blocks.push_back(Paragraph{"No prefix-cache hits and no preemptions during the run.", true});
    return;
  }
  {
    svg::LineChart c;
    c.title = "Prefix-cache hits and preemptions over time";
    c.x.title = "simulated time (s)";
    c.y.title = "prefix-cache hit rate (%)";
    c.y.min = 0, c.y.max = 1;
    c.y.tick_format = [](double v) { return svg::tick_label(v * 100); };
    c.series.push_back(binned_series(t, series_of(series, "prefix_hit_rate"),
                                     "prefix-cache hit rate (cumulative)", series_color(2), false));
    // Preemptions drawn on the same axis as a share of their final count.
    auto pre = series_of(series, "preemptions");
    const double last = pre.empty() ? 0 : pre.back();
    std::string cap = "Cumulative share of prompt tokens served from the prefix cache.";
    if (last > 0) {
      for (auto& v : pre) v /= last;
      auto p = binned_series(t, pre, "preemptions so far (% of " + fmt_int((long long)last) + ")",
                             series_color(3), false);
      p.dashed = true;
      c.series.push_back(p);
      cap += " Dashed: preemptions so far as a share of all " + fmt_int((long long)last) + ".";
    }
    c.height = 300;
    s.blocks.push_back(Figure{c.title, svg::line_chart(c), cap + how});
  }
}

}  // namespace

Section serving_section(const ResultView& r) {
  Section s{"serving", "Serving: latency, throughput and goodput", {}};
  const double slo_ttft = r.opt_number("/config/workload/slo/ttft_ms").value_or(0);
  const double slo_tpot = r.opt_number("/config/workload/slo/tpot_ms").value_or(0);
  {
    std::string d = r.string("/config/model", "the model") + " on " +
                    r.string("/config/cluster", "the cluster") + " (" + r.string("/config/gpu", "?") + "), ";
    const std::string pd = "/config/engine/disaggregation";
    if (r.has(pd)) {
      d += r.string(pd + "/prefill_instances") +
           " prefill instance(s) at tp=" + r.string(pd + "/prefill_tp") + " and " +
           r.string(pd + "/decode_instances") + " decode instance(s) at tp=" + r.string(pd + "/decode_tp") +
           " (prefill/decode disaggregated)";
    } else {
      d += r.string("/config/serving/replicas", "1") +
           " replica(s) at tp=" + r.string("/config/serving/tp", "1");
    }
    d += ", weights " + r.string("/config/serving/weights", "?") + ", KV " +
         r.string("/config/serving/kv_dtype", "?") + "; SLO: TTFT ≤ " +
         (slo_ttft > 0 ? fmt_ms(slo_ttft) : std::string("none")) + ", TPOT ≤ " +
         (slo_tpot > 0 ? fmt_ms(slo_tpot) : std::string("none")) + "; seed " +
         r.string("/config/workload/seed", "?") + ".";
    s.blocks.push_back(Paragraph{d, false});
  }
  KeyFigures k;
  k.items.push_back(
      {"requests", r.count("/metrics/requests"), "over " + fmt_seconds(r.number("/metrics/duration_s"))});
  k.items.push_back({"throughput", r.rate("/metrics/throughput_rps", "req/s"), ""});
  k.items.push_back({"goodput", r.rate("/metrics/goodput_rps", "req/s"), "requests meeting both SLOs"});
  k.items.push_back({"SLO attainment", r.percent("/metrics/slo_attainment", 1), ""});
  k.items.push_back({"output tokens", r.rate("/metrics/output_tokens_per_s", "tok/s"), ""});
  // The measured spread's range (simulate serve: metrics.<latency>_range_ms.p90 = [low, high]).
  auto with_range = [&](const char* key, std::string note) {
    const std::string p = std::string("/metrics/") + key + "_range_ms/p90";
    if (r.has(p) && r.at(p).is_array() && r.at(p).size() == 2)
      note += (note.empty() ? "" : "; ") + std::string("range ") + fmt_ms(r.number(p + "/0")) + " – " +
              fmt_ms(r.number(p + "/1"));
    return note;
  };
  k.items.push_back({"TTFT p90", r.ms("/metrics/ttft_ms/p90"),
                     with_range("ttft", slo_ttft > 0 ? "SLO " + fmt_ms(slo_ttft) : "")});
  k.items.push_back({"TPOT p90", r.ms("/metrics/tpot_ms/p90"),
                     with_range("tpot", slo_tpot > 0 ? "SLO " + fmt_ms(slo_tpot) : "")});
  if (r.has("/metrics/kv_usage/peak"))
    k.items.push_back({"KV cache peak", r.percent("/metrics/kv_usage/peak", 1), ""});
  if (r.has("/metrics/prefix_hit_rate"))
    k.items.push_back({"prefix-cache hits", r.percent("/metrics/prefix_hit_rate", 1), "of prompt tokens"});
  if (r.has("/metrics/preemptions")) k.items.push_back({"preemptions", r.count("/metrics/preemptions"), ""});
  s.blocks.push_back(k);

  if (r.has("/distributions/levels")) {
    cdf_figure(s, r, "Time to first token", {{"ttft_ms", "TTFT"}, {"queue_ms", "queueing"}}, slo_ttft,
               "TTFT");
    cdf_figure(s, r, "Time per output token and inter-token latency",
               {{"tpot_ms", "TPOT (per request)"}, {"itl_ms", "ITL (per token gap)"}}, slo_tpot, "TPOT");
    cdf_figure(s, r, "End-to-end latency", {{"e2e_ms", "end-to-end"}}, 0, "");
  }
  Table p;
  p.caption = "Latency percentiles (milliseconds)";
  p.header = {"latency", "p50", "p90", "p95", "p99", "mean", "max", "SLO"};
  for (const auto& m : kLatencies) {
    const std::string b = std::string("/metrics/") + m.key;
    if (!r.has(b)) continue;
    std::vector<Value> row = {text(m.label)};
    for (const char* q : {"p50", "p90", "p95", "p99", "mean", "max"}) row.push_back(r.ms(b + "/" + q));
    const double slo = std::string(m.key) == "ttft_ms"   ? slo_ttft
                       : std::string(m.key) == "tpot_ms" ? slo_tpot
                                                         : 0;
    row.push_back(slo > 0 ? derived(slo, fmt_ms) : text(""));
    p.rows.push_back(row);
  }
  s.blocks.push_back(p);

  // Throughput vs goodput, overall and per class.
  {
    svg::GroupedColumns g;
    g.title = "Throughput and goodput";
    g.value_axis.title = "requests per second";
    g.series_names = {"throughput", "goodput (meets both SLOs)"};
    g.colors = {series_color(0), series_color(2)};
    g.values.resize(2);
    g.labels.push_back("all requests");
    g.values[0].push_back(r.number("/metrics/throughput_rps"));
    g.values[1].push_back(r.number("/metrics/goodput_rps"));
    Table c;
    c.caption = "Per request class";
    c.header = {"class",          "requests", "throughput", "goodput",
                "SLO attainment", "TTFT p90", "TPOT p90",   "E2E p90"};
    if (r.has("/metrics/classes"))
      for (const auto& [name, v] : r.at("/metrics/classes").items()) {
        const std::string b = "/metrics/classes/" + name;
        g.labels.push_back(name);
        g.values[0].push_back(r.number(b + "/throughput_rps"));
        g.values[1].push_back(r.number(b + "/goodput_rps"));
        c.rows.push_back({text(name), r.count(b + "/requests"), r.rate(b + "/throughput_rps", "req/s"),
                          r.rate(b + "/goodput_rps", "req/s"), r.percent(b + "/slo_attainment", 1),
                          r.ms(b + "/ttft_ms/p90"), r.ms(b + "/tpot_ms/p90"), r.ms(b + "/e2e_ms/p90")});
      }
    s.blocks.push_back(Figure{
        g.title, svg::grouped_columns(g),
        "Goodput counts only requests that met both the TTFT and the TPOT target; the gap to throughput is "
        "work spent on requests that missed one."});
    if (!c.rows.empty()) s.blocks.push_back(c);
  }
  time_series_figures(s, r);

  // Per-instance load.
  if (r.has("/instances") && !r.at("/instances").empty()) {
    const auto& inst = r.at("/instances");
    svg::GroupedColumns g;
    g.title = "Load per instance";
    g.value_axis.title = "busy (% of the run)";
    g.value_axis.max = 1, g.value_axis.min = 0;
    g.value_axis.tick_format = [](double v) { return svg::tick_label(v * 100); };
    g.series_names = {"busy fraction"};
    g.colors = {series_color(0)};
    g.values.resize(1);
    Table t;
    t.caption = "Instances";
    t.header = {"#",           "role",       "tp", "requests", "engine steps", "busy", "KV capacity (tokens)",
                "preemptions", "prefix hits"};
    for (std::size_t i = 0; i < inst.size(); ++i) {
      const std::string b = "/instances/" + std::to_string(i);
      g.labels.push_back(r.string(b + "/role") + " " + std::to_string(i));
      g.values[0].push_back(r.number(b + "/busy_fraction"));
      t.rows.push_back({derived(double(i), [](double x) { return fmt_int((long long)x); }),
                        text(r.string(b + "/role")), r.count(b + "/tp"),
                        r.has(b + "/requests") ? r.count(b + "/requests") : text(""), r.count(b + "/steps"),
                        r.percent(b + "/busy_fraction", 1), r.count(b + "/kv_capacity_tokens"),
                        r.count(b + "/preemptions"), r.percent(b + "/prefix_hit_rate", 1)});
    }
    if (inst.size() > 1)
      s.blocks.push_back(Figure{g.title, svg::grouped_columns(g),
                                "Share of the run each instance spent running engine steps."});
    s.blocks.push_back(t);
  }
  if (r.has("/kv_transfer")) {
    Table t;
    t.caption = "Prefill → decode KV-cache transfers";
    t.header = {"transfers", "link", "mean", "p50", "p90", "p99", "max", "bytes in all"};
    auto opt_ms = [&](const char* key) {
      const std::string ptr = std::string("/kv_transfer/") + key;
      return r.has(ptr) ? r.ms(ptr) : text("");
    };
    t.rows.push_back({r.count("/kv_transfer/count"), text(r.string("/kv_transfer/link")), opt_ms("mean_ms"),
                      opt_ms("p50_ms"), opt_ms("p90_ms"), opt_ms("p99_ms"), opt_ms("max_ms"),
                      r.has("/kv_transfer/bytes_total") ? r.bytes("/kv_transfer/bytes_total") : text("")});
    s.blocks.push_back(t);
    s.blocks.push_back(
        Paragraph{"Transfer times include waiting for the link behind earlier transfers.", true});
  }
  {
    std::string e = "Engine: ";
    if (r.has("/metrics/steps")) e += fmt_int(r.at("/metrics/steps").get<long long>()) + " steps";
    if (r.has("/metrics/mean_batch_tokens"))
      e += ", " + fmt_sig(r.number("/metrics/mean_batch_tokens")) + " tokens per step";
    if (r.has("/metrics/busy_fraction")) e += ", busy " + fmt_percent(r.number("/metrics/busy_fraction"), 1);
    if (r.has("/metrics/useful_compute_fraction"))
      e += ", useful compute " + fmt_percent(r.number("/metrics/useful_compute_fraction"), 1);
    if (r.has("/cost_model")) e += "; cost model: " + r.string("/cost_model");
    s.blocks.push_back(Paragraph{e + ".", true});
  }
  if (r.has("/warnings") && r.at("/warnings").is_array() && !r.at("/warnings").empty()) {
    BulletList w;
    for (const auto& x : r.at("/warnings")) w.items.push_back("warning: " + x.get<std::string>());
    s.blocks.push_back(w);
  }
  return s;
}

}  // namespace infraplan::report
