#include "gui/plan_charts.hpp"

#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <QStringList>
#include <QValueAxis>
#include <algorithm>

#include "gui/palette.hpp"
#include "gui/training_charts.hpp"

namespace infraplan::gui {

QChart* build_train_plan_chart(const plan::TrainPlan& p) {
  std::vector<sim::train::TimeBreakdown> bars;
  QStringList labels;
  int rank = 0;
  for (const auto& c : p.candidates) {
    bars.push_back(c.breakdown);
    labels << QString("#%1 %2").arg(++rank).arg(QString::fromStdString(c.label()));
  }
  return build_breakdown_bars(bars, labels, "Iteration time of the ranked layouts",
                              "milliseconds per iteration");
}

QChart* build_pareto_chart(const plan::ServePlan& p) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  auto* x = new QValueAxis;
  x->setTitleText("tokens/s per user (1000 / mean TPOT)");
  auto* y = new QValueAxis;
  y->setTitleText("output tokens/s per GPU");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double xmax = 0, ymax = 0;
  int i = 0;
  for (const auto& c : p.candidates) {
    if (c.points.empty()) continue;
    auto* s = new QScatterSeries;
    s->setName(QString::fromStdString(c.label()));
    s->setMarkerSize(8);
    // Squares for prefill/decode pools, circles for aggregated replicas.
    s->setMarkerShape(c.mode == "aggregated" ? QScatterSeries::MarkerShapeCircle
                                             : QScatterSeries::MarkerShapeRectangle);
    const QColor col = series_color(i++);
    s->setColor(col);
    s->setBorderColor(col.darker(130));
    for (const auto& pt : c.points) {
      s->append(pt.tokens_per_s_per_user, pt.output_tokens_per_s_per_gpu);
      xmax = std::max(xmax, pt.tokens_per_s_per_user);
      ymax = std::max(ymax, pt.output_tokens_per_s_per_gpu);
    }
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  if (!p.pareto.empty()) {
    std::vector<plan::LoadPoint> front = p.pareto;
    std::sort(front.begin(), front.end(),
              [](const auto& a, const auto& b) { return a.tokens_per_s_per_user < b.tokens_per_s_per_user; });
    auto* line = new QLineSeries;
    line->setName("Pareto front");
    QPen pen(QColor(0x21, 0x21, 0x21));
    pen.setWidth(2);
    line->setPen(pen);
    for (const auto& pt : front) {
      line->append(pt.tokens_per_s_per_user, pt.output_tokens_per_s_per_gpu);
      xmax = std::max(xmax, pt.tokens_per_s_per_user);
      ymax = std::max(ymax, pt.output_tokens_per_s_per_gpu);
    }
    chart->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
  }
  x->setRange(0, std::max(xmax, 1.0) * 1.05);
  y->setRange(0, std::max(ymax, 1.0) * 1.05);
  x->applyNiceNumbers();
  y->applyNiceNumbers();
  x->setLabelFormat("%.0f");
  y->setLabelFormat("%.0f");
  chart->setTitle("Throughput per GPU against speed per user (every simulated load point)");
  chart->legend()->setAlignment(Qt::AlignRight);
  return chart;
}

}  // namespace infraplan::gui
