// Training simulation section: how long one iteration takes, where the time goes per pipeline
// stage, the critical path of the iteration as a timeline, and how sure the number is.
#include <algorithm>
#include <cmath>
#include <map>

#include "report/format.hpp"
#include "report/palette.hpp"
#include "report/sections.hpp"
#include "report/svg_chart.hpp"

namespace infraplan::report {

namespace {

// Breakdown categories in display order: (label, JSON key under a breakdown object).
struct Part {
  std::string label, pointer;
};

std::vector<Part> breakdown_parts(const Json& b) {
  std::vector<Part> parts = {
      {"compute", "/compute_s"}, {"recompute", "/recompute_s"}, {"optimizer", "/optimizer_s"}};
  if (b.contains("host_wait_s")) parts.push_back({"host", "/host_wait_s"});
  if (b.contains("exposed_comm_s"))
    for (const char* k : {"tp", "cp", "ep", "pp", "dp"})
      if (b["exposed_comm_s"].contains(k)) parts.push_back({k, std::string("/exposed_comm_s/") + k});
  // Kinds the list above does not know still show.
  if (b.contains("exposed_comm_s"))
    for (const auto& item : b["exposed_comm_s"].items()) {
      const std::string k = item.key();  // a named copy: lambdas may not capture bindings (clang 14)
      if (std::none_of(parts.begin(), parts.end(), [&](const Part& p) { return p.label == k; }))
        parts.push_back({k, "/exposed_comm_s/" + k});
    }
  parts.push_back({"bubble", "/bubble_s"});
  return parts;
}

std::string part_title(const std::string& p) {
  if (p == "compute" || p == "recompute" || p == "optimizer" || p == "bubble") return p;
  if (p == "host") return "host (waiting for the CPU)";
  return "exposed " + p + " comm.";
}

// The critical path as swimlanes (one row per category). Long paths are binned: time is cut into
// `kBins` equal slices and a category's row is filled over every slice it occupies.
constexpr std::size_t kBins = 600;

void critical_path_figure(Section& s, const ResultView& r, double T) {
  const auto& cp = r.at("/critical_path");
  if (!cp.is_array() || cp.empty()) return;
  std::vector<std::string> cats;
  std::map<std::string, double> total;
  std::map<std::string, long long> ops;
  double t_end = 0;
  for (const auto& seg : cp) {
    const std::string c = seg.at("category").get<std::string>();
    if (std::find(cats.begin(), cats.end(), c) == cats.end()) cats.push_back(c);
    total[c] += seg.at("seconds").get<double>();
    ops[c] += seg.value("ops", 0LL);
    t_end += seg.at("seconds").get<double>();
  }
  // Order lanes as the breakdown does.
  const std::vector<std::string> order = {"compute", "recompute", "optimizer", "host", "tp",
                                          "cp",      "ep",        "pp",        "dp",   "bubble"};
  std::stable_sort(cats.begin(), cats.end(), [&](const std::string& a, const std::string& b) {
    auto ia = std::find(order.begin(), order.end(), a) - order.begin();
    auto ib = std::find(order.begin(), order.end(), b) - order.begin();
    return ia < ib;
  });
  auto index = [&](const std::string& c) {
    return int(std::find(cats.begin(), cats.end(), c) - cats.begin());
  };
  svg::Timeline tl;
  tl.title = "Critical path of one iteration";
  tl.time_axis.title = "time from the start of the iteration (ms)";
  tl.time_axis.tick_format = [](double v) { return svg::tick_label(v * 1e3); };
  for (const auto& c : cats) {
    tl.rows.push_back(part_title(c));
    tl.categories.push_back(part_title(c));
    tl.colors.push_back(category_color(c));
  }
  const bool binned = cp.size() > kBins;
  if (!binned) {
    double t = 0;
    for (const auto& seg : cp) {
      const double d = seg.at("seconds").get<double>();
      const int k = index(seg.at("category").get<std::string>());
      tl.spans.push_back({k, k, t, t + d});
      t += d;
    }
  } else {
    const double w = t_end / double(kBins);
    std::vector<std::vector<char>> on(cats.size(), std::vector<char>(kBins, 0));
    double t = 0;
    for (const auto& seg : cp) {
      const double d = seg.at("seconds").get<double>();
      const std::size_t k = std::size_t(index(seg.at("category").get<std::string>()));
      const std::size_t b0 = std::min(kBins - 1, std::size_t(t / w)),
                        b1 = std::min(kBins - 1, std::size_t((t + d) / w));
      for (std::size_t b = b0; b <= b1; ++b) on[k][b] = 1;
      t += d;
    }
    for (std::size_t k = 0; k < cats.size(); ++k)
      for (std::size_t b = 0; b < kBins; ++b) {
        if (!on[k][b]) continue;
        std::size_t e = b;
        while (e + 1 < kBins && on[k][e + 1]) ++e;
        tl.spans.push_back({int(k), int(k), double(b) * w, double(e + 1) * w});
        b = e;
      }
  }
  if (r.has("/iteration_time_range_s") && r.at("/iteration_time_range_s").is_array() &&
      r.at("/iteration_time_range_s").size() == 2) {
    tl.bands.push_back({r.number("/iteration_time_range_s/0"), r.number("/iteration_time_range_s/1")});
    tl.band_label = "where the iteration may end (cost model's range)";
  }
  std::string cap =
      "The chain of operations that sets the iteration time, from first forward to the optimizer step, "
      "one lane per kind of work (" +
      fmt_int((long long)cp.size()) + " segments";
  cap += binned ? "; binned into " + std::to_string(kBins) + " slices of " +
                      fmt_seconds(t_end / double(kBins)) + ", a lane is filled over every slice it occupies)."
                : ").";
  if (std::fabs(t_end - T) > 1e-6 * T)
    cap += " The path sums to " + fmt_seconds(t_end) + " of the " + fmt_seconds(T) + " iteration.";
  s.blocks.push_back(Figure{tl.title, svg::timeline(tl), cap});
  Table t;
  t.caption = "Critical path by kind of work";
  t.header = {"kind", "seconds", "share of the path", "operations"};
  for (const auto& c : cats)
    t.rows.push_back({text(part_title(c)), derived(total[c], fmt_seconds),
                      derived(t_end > 0 ? total[c] / t_end : 0, [](double x) { return fmt_percent(x, 1); }),
                      derived(double(ops[c]), [](double x) { return fmt_int((long long)x); })});
  s.blocks.push_back(t);
}

}  // namespace

Section training_section(const ResultView& r) {
  Section s{"training", "Training: one iteration", {}};
  const double T = r.number("/iteration_time_s");
  if (r.has("/training")) {
    const auto& t = r.at("/training");
    auto g = [&](const char* k) { return t.contains(k) ? t[k].dump() : std::string("?"); };
    std::string line = r.string("/model", "the model") + " on " + r.string("/cluster", "the cluster");
    if (r.has("/gpus")) line += " (" + fmt_int(r.at("/gpus").get<long long>()) + " GPUs)";
    line += ": tp=" + g("tp") + " pp=" + g("pp") + " dp=" + g("dp") + " cp=" + g("cp") + " ep=" + g("ep") +
            " zero=" + g("zero") + ", global batch " + g("global_batch") + " × " + g("seq_len") +
            " tokens, micro-batch " + g("micro_batch") + ", " + t.value("precision", std::string("?")) +
            ", recompute " + t.value("recompute", std::string("?")) + ", schedule " +
            t.value("pp_schedule", std::string("?")) + ".";
    s.blocks.push_back(Paragraph{line, false});
  }
  KeyFigures k;
  std::string range;
  if (r.has("/iteration_time_range_s") && r.at("/iteration_time_range_s").is_array() &&
      r.at("/iteration_time_range_s").size() == 2)
    range = "range " + fmt_seconds(r.number("/iteration_time_range_s/0")) + " – " +
            fmt_seconds(r.number("/iteration_time_range_s/1"));
  k.items.push_back({"iteration time", r.seconds("/iteration_time_s"), range});
  k.items.push_back({"throughput", r.rate("/tokens_per_s", "tokens/s"), ""});
  k.items.push_back({"MFU", r.percent("/mfu", 1), "model FLOPs / peak"});
  k.items.push_back({"HFU", r.percent("/hfu", 1), "with recompute"});
  k.items.push_back({"peak memory per GPU", r.bytes("/peak_bytes"), ""});
  if (r.has("/peak_flops_per_gpu"))
    k.items.push_back(
        {"GPU peak (GEMM dtype)", r.value("/peak_flops_per_gpu", fmt_flops), "dense, datasheet"});
  s.blocks.push_back(k);
  if (!range.empty())
    s.blocks.push_back(Paragraph{"The cost model's measured spread puts the iteration between " +
                                     fmt_seconds(r.number("/iteration_time_range_s/0")) + " and " +
                                     fmt_seconds(r.number("/iteration_time_range_s/1")) +
                                     " (the shaded band below).",
                                 true});
  if (r.has("/iteration_time_interval_s") && r.at("/iteration_time_interval_s").is_array() &&
      r.at("/iteration_time_interval_s").size() == 2)
    s.blocks.push_back(Paragraph{"Against measured steps: 80% interval " +
                                     fmt_seconds(r.number("/iteration_time_interval_s/0")) + " – " +
                                     fmt_seconds(r.number("/iteration_time_interval_s/1")) + " (" +
                                     r.string("/interval", "the profile's validation record") + ").",
                                 true});

  // Breakdown: one bar per stage when the result lists them.
  const auto parts = breakdown_parts(r.at("/breakdown"));
  std::vector<std::string> bars;
  if (r.has("/stage_breakdown") && r.at("/stage_breakdown").is_array() && !r.at("/stage_breakdown").empty()) {
    for (std::size_t i = 0; i < r.at("/stage_breakdown").size(); ++i)
      bars.push_back("/stage_breakdown/" + std::to_string(i));
  } else {
    bars.push_back("/breakdown");
  }
  svg::StackedBars ch;
  ch.title = bars.size() > 1 ? "Where the time goes, per pipeline stage" : "Where the time goes";
  ch.value_axis.title = "time in one iteration (ms)";
  ch.value_axis.tick_format = [](double v) { return svg::tick_label(v * 1e3); };
  for (const auto& p : parts) {
    ch.categories.push_back(part_title(p.label));
    ch.colors.push_back(category_color(p.label));
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    std::vector<double> v;
    double sum = 0;
    for (const auto& p : parts) {
      const double x = r.opt_number(bars[i] + p.pointer).value_or(0);
      v.push_back(x);
      sum += x;
    }
    ch.values.push_back(v);
    ch.bar_labels.push_back(bars.size() > 1 ? "stage " + std::to_string(i) : "iteration");
    ch.bar_notes.push_back(fmt_seconds(sum));
  }
  ch.refs.push_back({T, "iteration time " + fmt_seconds(T), true, kReferenceColor});
  s.blocks.push_back(
      Figure{ch.title, svg::stacked_bars(ch),
             "Time of one iteration by what the GPU's compute stream was doing; exposed communication is "
             "the part not hidden behind compute; the bubble is pipeline fill and drain."});
  Table t;
  const int stage = r.has("/reported_stage") ? r.at("/reported_stage").get<int>() : 0;
  t.caption = "Breakdown of the busiest stage (stage " + std::to_string(stage) + ")";
  t.header = {"part", "seconds", "share of the iteration"};
  for (const auto& p : parts) {
    if (!r.has("/breakdown" + p.pointer)) continue;
    t.rows.push_back({text(part_title(p.label)), r.seconds("/breakdown" + p.pointer),
                      derived(T > 0 ? r.number("/breakdown" + p.pointer) / T : 0,
                              [](double x) { return fmt_percent(x, 1); })});
  }
  s.blocks.push_back(t);

  if (r.has("/critical_path")) critical_path_figure(s, r, T);

  if (r.has("/comm_wire_bytes_per_gpu") && !r.at("/comm_wire_bytes_per_gpu").empty()) {
    Table c;
    c.caption = "Communication per GPU and iteration (busiest lane)";
    c.header = {"kind", "bytes on the wire", "collective sizes (nccl-tests)"};
    for (const auto& [kind, v] : r.at("/comm_wire_bytes_per_gpu").items())
      c.rows.push_back({text(kind), r.bytes("/comm_wire_bytes_per_gpu/" + kind),
                        r.has("/comm_size_bytes_per_gpu/" + kind)
                            ? r.bytes("/comm_size_bytes_per_gpu/" + kind)
                            : text("")});
    s.blocks.push_back(c);
  }
  if (r.has("/warnings") && r.at("/warnings").is_array() && !r.at("/warnings").empty()) {
    BulletList w;
    for (const auto& x : r.at("/warnings")) w.items.push_back("warning: " + x.get<std::string>());
    s.blocks.push_back(w);
  }
  std::string how = "Simulated";
  if (r.has("/mode")) how += " in " + r.string("/mode") + " mode on the " + r.string("/backend") + " backend";
  if (r.has("/ops"))
    how += ", " + fmt_int(r.at("/ops").get<long long>()) + " operations on " +
           fmt_int(r.at("/lanes").get<long long>()) + " lanes";
  if (r.has("/cost_model")) how += "; cost model: " + r.string("/cost_model");
  s.blocks.push_back(Paragraph{how + ".", true});
  return s;
}

}  // namespace infraplan::report
