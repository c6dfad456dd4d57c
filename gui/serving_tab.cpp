#include "gui/serving_tab.hpp"

#include <algorithm>

#include "gui/tab_header.hpp"

#include <QChartView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/serving_charts.hpp"
#include "simulator/serving_sim.hpp"

namespace infraplan::gui {

namespace {

void replace_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

QString pct(const sim::serve::Percentiles& p, int digits) {
  return QString("%1 / %2 / %3")
      .arg(p.p50, 0, 'f', digits)
      .arg(p.p90, 0, 'f', digits)
      .arg(p.p99, 0, 'f', digits);
}

}  // namespace

ServingTab::ServingTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  headline_ = add_headline(layout, "servingHeadline");
  note_ = add_note(layout, "Choose the Serving job and press “Run simulation” to simulate the workload.");
  add_chart_pair(layout, cdf_, kv_, 3, 2);
}

void ServingTab::setNote(const QString& text) { set_note(note_, text); }

void ServingTab::show(const Evaluation& ev) {
  const auto& r = *ev.serving;
  const auto& m = r.metrics;
  const auto& s = *ev.scenario.serving;
  const QLocale en(QLocale::English);
  // The SLO the simulation judged goodput against, as the engine resolved it.
  sim::serve::Slo slo;
  if (r.config.contains("workload") && r.config["workload"].contains("slo")) {
    const auto& j = r.config["workload"]["slo"];
    slo.ttft_ms = j.value("ttft_ms", 0.0);
    slo.tpot_ms = j.value("tpot_ms", 0.0);
  }
  QString h = QString("<b>%1</b> on <b>%2</b>: %3 replica(s) × tp=%4, weights %5, KV %6; cost model: %7")
                  .arg(QString::fromStdString(ev.scenario.model.name),
                       QString::fromStdString(ev.scenario.cluster.name))
                  .arg(s.replicas)
                  .arg(s.tp)
                  .arg(QString::fromStdString(strat::weight_quant_name(s.weights)),
                       QString::fromStdString(std::string(dtype_name(s.kv_dtype))),
                       QString::fromStdString(ev.cost_model));
  h += QString(
           "<br><b>%1</b> requests in %2 s: <b>%3</b> req/s, <b>%4</b> output tokens/s; goodput <b>%5</b> "
           "req/s "
           "(%6% meet TTFT ≤ %7 and TPOT ≤ %8)")
           .arg(m.requests)
           .arg(m.duration_s, 0, 'f', 1)
           .arg(m.throughput_rps, 0, 'f', 2)
           .arg(en.toString(m.output_tokens_per_s, 'f', 0))
           .arg(m.goodput_rps, 0, 'f', 2)
           .arg(100 * m.slo_attainment, 0, 'f', 1)
           .arg(slo.ttft_ms > 0 ? QString::number(slo.ttft_ms) + " ms" : "∞")
           .arg(slo.tpot_ms > 0 ? QString::number(slo.tpot_ms) + " ms" : "∞");
  h += QString(
           "<br>p50 / p90 / p99: TTFT %1 ms · TPOT %2 ms · end-to-end %3 ms; KV use mean %4%, peak %5%; "
           "preemptions %6")
           .arg(pct(m.ttft_ms, 1), pct(m.tpot_ms, 2), pct(m.e2e_ms, 0))
           .arg(100 * m.mean_kv_usage, 0, 'f', 1)
           .arg(100 * m.peak_kv_usage, 0, 'f', 1)
           .arg(m.preemptions);
  if (ev.serving_range) {
    const auto& lo = ev.serving_range->low;
    const auto& hi = ev.serving_range->high;
    auto span = [](double a, double b, int digits) {
      return QString("%1 … %2").arg(std::min(a, b), 0, 'f', digits).arg(std::max(a, b), 0, 'f', digits);
    };
    h += QString("<br>range at p50: TTFT %1 ms · TPOT %2 ms · end-to-end %3 ms <span style='color:#555'>(%4)</span>")
             .arg(span(lo.ttft_ms.p50, hi.ttft_ms.p50, 1), span(lo.tpot_ms.p50, hi.tpot_ms.p50, 2),
                  span(lo.e2e_ms.p50, hi.e2e_ms.p50, 0), QString::fromStdString(ev.uncertainty).toHtmlEscaped());
  }
  if (ev.serving_interval) {
    const auto& iv = *ev.serving_interval;
    QString parts;
    if (iv.ttft_ms)
      parts +=
          QString("TTFT %1 … %2 ms").arg(iv.ttft_ms->first, 0, 'f', 1).arg(iv.ttft_ms->second, 0, 'f', 1);
    if (iv.tpot_ms)
      parts +=
          QString(parts.isEmpty() ? "" : " · ") +
          QString("TPOT %1 … %2 ms").arg(iv.tpot_ms->first, 0, 'f', 2).arg(iv.tpot_ms->second, 0, 'f', 2);
    h += QString("<br>80% interval at p50: %1 <span style='color:#555'>(%2)</span>")
             .arg(parts, QString::fromStdString(iv.note).toHtmlEscaped());
  }
  if (!ev.serving_caveat.empty())
    h += "<br><span style='color:#8a6d00'>warning: " +
         QString::fromStdString(ev.serving_caveat).toHtmlEscaped() + "</span>";
  headline_->setText(h);
  setNote({});
  replace_chart(cdf_, build_latency_cdf_chart(r, slo));
  replace_chart(kv_, build_kv_usage_chart(r));
}

QString ServingTab::headline() const { return headline_->text(); }

}  // namespace infraplan::gui
