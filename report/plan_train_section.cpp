// Training plan section: the ranked layouts, the speed/memory trade-off, what was rejected and why
// the winner wins.
#include <algorithm>
#include <cmath>

#include "report/format.hpp"
#include "report/palette.hpp"
#include "report/sections.hpp"
#include "report/svg_chart.hpp"

namespace infraplan::report {

namespace {

std::string layout_label(const Json& c) {
  std::string s = "tp" + c.at("tp").dump() + " pp" + c.at("pp").dump() + " dp" + c.at("dp").dump();
  if (c.value("cp", 1) > 1) s += " cp" + c.at("cp").dump();
  if (c.value("ep", 1) > 1) s += " ep" + c.at("ep").dump();
  s += " zero" + c.at("zero").dump() + " mb" + c.at("micro_batch").dump();
  const std::string rc = c.value("recompute", std::string("none"));
  if (rc != "none") s += " rc:" + rc;
  if (c.value("pp", 1) > 1) {
    s += " " + c.value("pp_schedule", std::string(""));
    if (c.value("pp_schedule", std::string("")) == "interleaved") s += "/" + c.at("pp_virtual_stages").dump();
  }
  return s;
}

double exposed_total(const Json& b) {
  double t = 0;
  if (b.contains("exposed_comm_s"))
    for (const auto& [k, v] : b["exposed_comm_s"].items()) t += v.get<double>();
  return t;
}

// Pareto front of (maximise x, minimise y).
std::vector<std::size_t> front_max_min(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::size_t> f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < x.size() && !dominated; ++j)
      dominated = j != i && x[j] >= x[i] && y[j] <= y[i] && (x[j] > x[i] || y[j] < y[i]);
    if (!dominated) f.push_back(i);
  }
  return f;
}

}  // namespace

Section plan_train_section(const ResultView& r, const ReportInputs& in) {
  Section s{"plan", "Training plan: the best layout", {}};
  const auto& cands = r.at("/candidates");
  const double gpus =
      r.has("/cluster/nodes") ? r.number("/cluster/nodes") * r.number("/cluster/gpus_per_node") : 0;
  s.blocks.push_back(
      Paragraph{r.string("/model") + " on " + (gpus > 0 ? fmt_int((long long)gpus) + " × " : std::string()) +
                    r.string("/cluster/gpu", "?") + " (" + r.string("/cluster/name", "?") + "), sequence " +
                    r.string("/seq_len") + " tokens, global batch " + r.string("/global_batch") +
                    " sequences; cost model: " + r.string("/cost_model", "?") + ".",
                false});
  if (cands.empty()) {
    s.blocks.push_back(Paragraph{"No layout fits: every candidate was rejected (reasons below).", false});
  } else {
    KeyFigures k;
    k.items.push_back(
        {"recommended layout", text(layout_label(cands[0])), r.string("/candidates/0/precision")});
    k.items.push_back({"iteration time", r.seconds("/candidates/0/iteration_time_s"), ""});
    k.items.push_back({"throughput", r.rate("/candidates/0/tokens_per_s", "tokens/s"), ""});
    k.items.push_back({"MFU", r.percent("/candidates/0/mfu", 1), ""});
    k.items.push_back({"peak memory per GPU", r.bytes("/candidates/0/peak_bytes"), ""});
    if (r.has("/candidates/0/time_to_train_s")) {
      k.items.push_back({"time to train", r.seconds("/candidates/0/time_to_train_s"), ""});
      k.items.push_back(
          {"GPU-hours", r.value("/candidates/0/gpu_hours", [](double x) { return fmt_sig(x); }), ""});
      if (in.price_per_gpu_hour > 0)
        k.items.push_back({"cost",
                           derived(r.number("/candidates/0/gpu_hours") * in.price_per_gpu_hour,
                                   [](double x) { return "$" + fmt_sig(x); }),
                           "at $" + fmt_sig(in.price_per_gpu_hour) + " per GPU-hour"});
    }
    k.items.push_back({"layouts estimated", r.count("/layouts_estimated"), ""});
    s.blocks.push_back(k);
  }

  Table t;
  t.caption = "Ranked layouts (the listed ones re-simulated; the first is recommended)";
  t.header = {"#", "layout", "iteration", "tokens/s", "MFU", "peak memory", "bubble", "exposed comm."};
  const bool ttt = !cands.empty() && cands[0].contains("time_to_train_s");
  if (ttt) t.header.insert(t.header.end(), {"time to train", "GPU-hours"});
  if (ttt && in.price_per_gpu_hour > 0) t.header.push_back("cost (USD)");
  auto pct_of = [](double x) { return fmt_percent(x, 1); };
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const std::string b = "/candidates/" + std::to_string(i);
    const double T = r.number(b + "/iteration_time_s");
    std::vector<Value> row = {derived(double(i + 1), [](double x) { return fmt_int((long long)x); }),
                              text(layout_label(cands[i])),
                              r.seconds(b + "/iteration_time_s"),
                              r.rate(b + "/tokens_per_s", ""),
                              r.percent(b + "/mfu", 1),
                              r.bytes(b + "/peak_bytes"),
                              derived(T > 0 ? r.number(b + "/breakdown/bubble_s") / T : 0, pct_of),
                              derived(T > 0 ? exposed_total(cands[i].at("breakdown")) / T : 0, pct_of)};
    if (ttt) {
      row.push_back(r.has(b + "/time_to_train_s") ? r.seconds(b + "/time_to_train_s") : text(""));
      row.push_back(r.has(b + "/gpu_hours") ? r.value(b + "/gpu_hours", [](double x) { return fmt_sig(x); })
                                            : text(""));
      if (in.price_per_gpu_hour > 0)
        row.push_back(derived(cands[i].value("gpu_hours", 0.0) * in.price_per_gpu_hour,
                              [](double x) { return "$" + fmt_sig(x); }));
    }
    t.rows.push_back(row);
  }
  t.highlight_row = cands.empty() ? -1 : 0;
  s.blocks.push_back(t);

  // Trade-off: throughput per GPU against memory per GPU, over every simulated layout.
  {
    std::vector<double> x, y;
    std::vector<std::string> labels;
    auto add = [&](const Json& c, const std::string& prefix) {
      x.push_back(c.at("tokens_per_s").get<double>() / std::max(1.0, gpus));
      y.push_back(c.at("peak_bytes").get<double>() / 1073741824.0);
      labels.push_back(prefix + layout_label(c));
    };
    for (const auto& c : cands) add(c, "");
    if (r.has("/alternatives"))
      for (const auto& a : r.at("/alternatives")) add(a, a.value("family", std::string("")) + ": ");
    if (x.size() > 1) {
      const auto f = front_max_min(x, y);
      svg::ScatterGroup all{"simulated layouts", series_color(0), x, y, labels, false};
      svg::ScatterGroup front{"Pareto front (faster or smaller)", series_color(3), {}, {}, {}, true};
      for (auto i : f) front.x.push_back(x[i]), front.y.push_back(y[i]), front.labels.push_back(labels[i]);
      svg::Scatter sc;
      sc.title = "Throughput per GPU against memory per GPU";
      sc.x.title = "tokens/s per GPU";
      sc.x.from_zero = false;
      sc.y.title = "peak memory per GPU (GiB)";
      sc.groups = {all, front};
      s.blocks.push_back(Figure{
          sc.title, svg::scatter(sc),
          "Every re-simulated layout (ranked and best of other families). On the front, no other layout "
          "is both faster and smaller; moving along it trades speed for memory headroom."});
    }
  }
  if (r.has("/alternatives") && !r.at("/alternatives").empty()) {
    Table a;
    a.caption = "Best layout of each other family";
    a.header = {"family", "layout", "iteration", "tokens/s", "MFU", "peak memory"};
    for (std::size_t i = 0; i < r.at("/alternatives").size(); ++i) {
      const std::string b = "/alternatives/" + std::to_string(i);
      a.rows.push_back({text(r.string(b + "/family")), text(layout_label(r.at(b))),
                        r.seconds(b + "/iteration_time_s"), r.rate(b + "/tokens_per_s", ""),
                        r.percent(b + "/mfu", 1), r.bytes(b + "/peak_bytes")});
    }
    s.blocks.push_back(a);
  }
  if (r.has("/rejected") && !r.at("/rejected").empty()) {
    const auto& rej = r.at("/rejected");
    Table t2;
    t2.caption = "Rejected layouts, by reason";
    t2.header = {"reason", "layouts"};
    svg::StackedBars ch;
    ch.title = "Why layouts were rejected";
    ch.value_axis.title = "layouts rejected";
    ch.categories = {"layouts"};
    ch.colors = {series_color(1)};
    for (std::size_t i = 0; i < rej.size(); ++i) {
      const std::string b = "/rejected/" + std::to_string(i);
      t2.rows.push_back({text(r.string(b + "/reason")), r.count(b + "/count")});
      if (i < 12) {
        std::string reason = r.string(b + "/reason");
        if (reason.size() > 34) reason = reason.substr(0, 33) + "…";
        ch.bar_labels.push_back(reason);
        ch.values.push_back({r.number(b + "/count")});
        ch.bar_notes.push_back(fmt_int((long long)r.number(b + "/count")));
      }
    }
    s.blocks.push_back(
        Figure{ch.title, svg::stacked_bars(ch),
               rej.size() > 12 ? "The 12 most frequent reasons; the table lists all." : "All reasons."});
    s.blocks.push_back(t2);
  }
  if (r.has("/explanation") && !r.at("/explanation").empty()) {
    BulletList l;
    for (const auto& e : r.at("/explanation")) l.items.push_back(e.get<std::string>());
    s.blocks.push_back(Paragraph{"Why this layout:", false});
    s.blocks.push_back(l);
  }
  return s;
}

}  // namespace infraplan::report
