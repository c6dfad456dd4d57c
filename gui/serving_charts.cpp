#include "gui/serving_charts.hpp"

#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/palette.hpp"

namespace infraplan::gui {

std::vector<std::pair<double, double>> cdf_points(std::vector<double> v, std::size_t max_points) {
  std::vector<std::pair<double, double>> out;
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !(x > 0); }), v.end());
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const std::size_t step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, max_points));
  for (std::size_t i = 0; i < n; i += step) out.push_back({v[i], double(i + 1) / double(n)});
  if (out.back().first != v.back() || out.back().second != 1.0) out.push_back({v.back(), 1.0});
  return out;
}

namespace {

QLineSeries* cdf_series(const QString& name, const std::vector<double>& ms, const QColor& color) {
  auto* s = new QLineSeries;
  s->setName(name);
  for (const auto& [x, y] : cdf_points(ms)) s->append(x, 100 * y);
  QPen pen(color);
  pen.setWidth(2);
  s->setPen(pen);
  return s;
}

QLineSeries* vertical(const QString& name, double x, const QColor& color) {
  auto* s = new QLineSeries;
  s->setName(name);
  s->append(x, 0);
  s->append(x, 100);
  QPen pen(color);
  pen.setStyle(Qt::DashLine);
  pen.setWidth(1);
  s->setPen(pen);
  return s;
}

}  // namespace

QChart* build_latency_cdf_chart(const sim::serve::ServingResult& r, const sim::serve::Slo& slo) {
  std::vector<double> ttft, tpot;
  for (const auto& q : r.requests) {
    ttft.push_back(1e3 * q.ttft_s());
    if (q.output_tokens > 1) tpot.push_back(1e3 * q.tpot_s());
  }
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  std::vector<QLineSeries*> series = {cdf_series(QString("TTFT (p50 %1, p99 %2 ms)")
                                                     .arg(r.metrics.ttft_ms.p50, 0, 'f', 1)
                                                     .arg(r.metrics.ttft_ms.p99, 0, 'f', 1),
                                                 ttft, series_color(0)),
                                      cdf_series(QString("TPOT (p50 %1, p99 %2 ms)")
                                                     .arg(r.metrics.tpot_ms.p50, 0, 'f', 2)
                                                     .arg(r.metrics.tpot_ms.p99, 0, 'f', 2),
                                                 tpot, series_color(1))};
  if (slo.ttft_ms > 0)
    series.push_back(vertical(QString("TTFT SLO %1 ms").arg(slo.ttft_ms), slo.ttft_ms, series_color(0)));
  if (slo.tpot_ms > 0)
    series.push_back(vertical(QString("TPOT SLO %1 ms").arg(slo.tpot_ms), slo.tpot_ms, series_color(1)));

  double lo = 1e300, hi = 0;
  for (auto* s : series)
    for (const auto& p : s->points()) lo = std::min(lo, p.x()), hi = std::max(hi, p.x());
  if (hi <= 0) lo = 0.1, hi = 1;
  auto* x = new QLogValueAxis;
  x->setBase(10);
  x->setTitleText("milliseconds (log scale)");
  x->setLabelFormat("%g");
  x->setRange(std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi))));
  x->setMinorTickCount(8);
  auto* y = new QValueAxis;
  y->setRange(0, 100);
  y->setTitleText("% of requests at or below");
  y->setLabelFormat("%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (auto* s : series) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  chart->setTitle(QString("Latency CDF over %1 requests").arg(qlonglong(r.requests.size())));
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

QChart* build_kv_usage_chart(const sim::serve::ServingResult& r) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  auto* kv = new QLineSeries;
  kv->setName("KV cache in use (%)");
  auto* running = new QLineSeries;
  running->setName("running sequences");
  auto* waiting = new QLineSeries;
  waiting->setName("waiting sequences");
  double tmax = 0, nmax = 1;
  for (const auto& p : r.metrics.series) {
    kv->append(p.t_s, 100 * p.kv_usage);
    running->append(p.t_s, double(p.running));
    waiting->append(p.t_s, double(p.waiting));
    tmax = std::max(tmax, p.t_s);
    nmax = std::max({nmax, double(p.running), double(p.waiting)});
  }
  kv->setPen(QPen(series_color(4), 2));
  running->setPen(QPen(series_color(0), 1.5));
  waiting->setPen(QPen(series_color(2), 1.5));
  auto* x = new QValueAxis;
  x->setTitleText("simulated seconds");
  x->setRange(0, std::max(tmax, 1e-3));
  x->applyNiceNumbers();
  auto* y = new QValueAxis;
  y->setRange(0, 100);
  y->setTitleText("% KV in use");
  y->setLabelFormat("%.0f");
  auto* y2 = new QValueAxis;
  y2->setRange(0, nmax * 1.05);
  y2->applyNiceNumbers();
  y2->setTitleText("sequences");
  y2->setLabelFormat("%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(y2, Qt::AlignRight);
  chart->addSeries(kv);
  kv->attachAxis(x), kv->attachAxis(y);
  for (auto* s : {running, waiting}) {
    chart->addSeries(s);
    s->attachAxis(x), s->attachAxis(y2);
  }
  chart->setTitle("Engine state over time (mean over instances)");
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

}  // namespace infraplan::gui
