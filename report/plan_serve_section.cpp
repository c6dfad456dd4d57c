// Serving plan section: the ranked deployments, throughput per GPU against speed per user, what
// was rejected and why the recommendation wins.
#include <algorithm>

#include "report/format.hpp"
#include "report/palette.hpp"
#include "report/sections.hpp"
#include "report/svg_chart.hpp"

namespace infraplan::report {

namespace {

std::string ratio(const Json& c) {
  if (c.value("mode", std::string("")) == "aggregated") return "–";
  return c.at("prefill_gpus").dump() + ":" + c.at("decode_gpus").dump();
}

}  // namespace

Section plan_serve_section(const ResultView& r, const ReportInputs& in) {
  Section s{"plan", "Serving plan: the best deployment", {}};
  const auto& cands = r.at("/candidates");
  const double target = r.opt_number("/target_rate_rps").value_or(0);
  {
    std::string d = r.string("/model") + " on " + r.string("/gpu") + ", ";
    d += target > 0 ? "target " + fmt_rate(target, "requests/s")
                    : "a budget of " + r.string("/gpu_budget") + " GPUs";
    d += ", SLO TTFT ≤ " + fmt_ms(r.number("/slo/ttft_ms")) + " and TPOT ≤ " +
         fmt_ms(r.number("/slo/tpot_ms")) + " for " + fmt_percent(r.number("/slo/attainment"), 0) +
         " of requests; " + fmt_int(r.at("/simulations").get<long long>()) +
         " simulations; cost model: " + r.string("/cost_model", "?") + ".";
    s.blocks.push_back(Paragraph{d, false});
  }
  const double price = in.price_per_gpu_hour;
  if (!cands.empty()) {
    KeyFigures k;
    k.items.push_back(
        {"recommended deployment", text(r.string("/candidates/0/label")), r.string("/candidates/0/mode")});
    k.items.push_back({"GPUs", r.count("/candidates/0/gpus"), ""});
    k.items.push_back(
        {"goodput", r.rate("/candidates/0/goodput_rps", "req/s"), "requests meeting both SLOs"});
    k.items.push_back({"goodput per GPU", r.rate("/candidates/0/goodput_rps_per_gpu", "req/s"), ""});
    k.items.push_back(
        {"TTFT p90", r.ms("/candidates/0/ttft_p90_ms"), "SLO " + fmt_ms(r.number("/slo/ttft_ms"))});
    k.items.push_back(
        {"TPOT p90", r.ms("/candidates/0/tpot_p90_ms"), "SLO " + fmt_ms(r.number("/slo/tpot_ms"))});
    k.items.push_back({"meets the target", text(cands[0].value("meets_target", false) ? "yes" : "no"),
                       "SLO attainment " + fmt_percent(r.number("/candidates/0/slo_attainment"), 1)});
    if (price > 0)
      k.items.push_back(
          {"cost",
           derived(r.number("/candidates/0/gpus") * price, [](double x) { return "$" + fmt_sig(x) + "/h"; }),
           "at $" + fmt_sig(price) + " per GPU-hour"});
    s.blocks.push_back(k);
  } else {
    s.blocks.push_back(Paragraph{"No deployment meets the SLOs (reasons below).", false});
  }
  Table t;
  t.caption =
      "Ranked deployments (each verified by simulating the whole deployment; the first is recommended)";
  t.header = {"#",       "deployment", "GPUs",     "P:D GPUs",       "capacity/inst.",  "goodput",
              "per GPU", "TTFT p90",   "TPOT p90", "tok/s per user", "KV tokens/inst.", "meets"};
  if (price > 0) t.header.push_back("USD per hour");
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const std::string b = "/candidates/" + std::to_string(i);
    std::vector<Value> row = {derived(double(i + 1), [](double x) { return fmt_int((long long)x); }),
                              text(r.string(b + "/label")),
                              r.count(b + "/gpus"),
                              text(ratio(cands[i])),
                              r.rate(b + "/capacity_rps_per_instance", "req/s"),
                              r.rate(b + "/goodput_rps", "req/s"),
                              r.rate(b + "/goodput_rps_per_gpu", "req/s"),
                              r.ms(b + "/ttft_p90_ms"),
                              r.ms(b + "/tpot_p90_ms"),
                              r.plain(b + "/tokens_per_s_per_user"),
                              r.count(b + "/kv_capacity_tokens"),
                              text(cands[i].value("meets_target", false) ? "yes" : "no")};
    if (price > 0)
      row.push_back(derived(r.number(b + "/gpus") * price, [](double x) { return "$" + fmt_sig(x); }));
    t.rows.push_back(row);
  }
  t.highlight_row = cands.empty() ? -1 : 0;
  s.blocks.push_back(t);

  // Pareto chart: every load point the search simulated, the front on top.
  {
    svg::ScatterGroup agg{"aggregated (load points)", series_color(0), {}, {}, {}, false};
    svg::ScatterGroup dis{"disaggregated (load points)", series_color(1), {}, {}, {}, false};
    for (const auto& c : cands) {
      auto& g = c.value("mode", std::string("")) == "aggregated" ? agg : dis;
      if (!c.contains("load_points")) continue;
      for (const auto& p : c["load_points"]) {
        g.x.push_back(p.at("tokens_per_s_per_user").get<double>());
        g.y.push_back(p.at("output_tokens_per_s_per_gpu").get<double>());
        g.labels.push_back(c.value("label", std::string("")) + " at " +
                           fmt_sig(p.at("rate_rps").get<double>()) + " req/s");
      }
    }
    svg::ScatterGroup front{"Pareto front", series_color(3), {}, {}, {}, true};
    if (r.has("/pareto"))
      for (const auto& p : r.at("/pareto")) {
        front.x.push_back(p.at("tokens_per_s_per_user").get<double>());
        front.y.push_back(p.at("output_tokens_per_s_per_gpu").get<double>());
        front.labels.push_back(p.value("candidate", std::string("")));
      }
    svg::Scatter sc;
    sc.title = "Throughput per GPU against speed per user";
    sc.x.title = "output tokens/s per user (1000 / mean TPOT in ms)";
    sc.x.from_zero = false;
    sc.y.title = "output tokens/s per GPU";
    for (auto* g : {&agg, &dis, &front})
      if (!g->x.empty()) sc.groups.push_back(*g);
    if (!sc.groups.empty()) {
      std::string cap =
          "Each point is one simulated load of one deployment that met the SLOs. On the front no other point "
          "is both "
          "faster per user and cheaper per token; a deployment further right serves each user faster, one "
          "higher "
          "serves more tokens per GPU.";
      if (price > 0)
        cap += " At $" + fmt_sig(price) + " per GPU-hour, y tokens/s per GPU cost $" + fmt_sig(price) +
               " / (3.6 × y) per 1000 output tokens.";
      s.blocks.push_back(Figure{sc.title, svg::scatter(sc), cap});
    }
    if (price > 0 && r.has("/pareto") && !r.at("/pareto").empty()) {
      Table c;
      c.caption = "Cost on the Pareto front";
      c.header = {"deployment", "load", "tok/s per user", "output tok/s per GPU",
                  "USD per million output tokens"};
      for (std::size_t i = 0; i < r.at("/pareto").size(); ++i) {
        const std::string b = "/pareto/" + std::to_string(i);
        const double y = r.number(b + "/output_tokens_per_s_per_gpu");
        c.rows.push_back(
            {text(r.string(b + "/candidate")), r.rate(b + "/rate_rps", "req/s"),
             r.plain(b + "/tokens_per_s_per_user"), r.plain(b + "/output_tokens_per_s_per_gpu"),
             derived(y > 0 ? price / 3600.0 / y * 1e6 : 0, [](double x) { return "$" + fmt_sig(x); })});
      }
      s.blocks.push_back(c);
    }
  }
  if (r.has("/rejected") && !r.at("/rejected").empty()) {
    Table t2;
    t2.caption = "Rejected configurations, by reason";
    t2.header = {"reason", "configurations"};
    for (std::size_t i = 0; i < r.at("/rejected").size(); ++i) {
      const std::string b = "/rejected/" + std::to_string(i);
      t2.rows.push_back({text(r.string(b + "/reason")), r.count(b + "/count")});
    }
    s.blocks.push_back(t2);
  }
  if (r.has("/explanation") && !r.at("/explanation").empty()) {
    BulletList l;
    for (const auto& e : r.at("/explanation")) l.items.push_back(e.get<std::string>());
    s.blocks.push_back(Paragraph{"Why this deployment:", false});
    s.blocks.push_back(l);
  }
  return s;
}

}  // namespace infraplan::report
