#include "gui/training_charts.hpp"

#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <map>
#include <set>

#include "gui/palette.hpp"
#include "strategies/training_ops.hpp"

namespace infraplan::gui {

QChart* build_breakdown_bars(const std::vector<sim::train::TimeBreakdown>& stages, const QStringList& labels,
                             const QString& title, const QString& axis_title) {
  std::set<std::string> kinds;
  for (const auto& b : stages)
    for (const auto& [k, v] : b.exposed_comm) kinds.insert(k);

  auto* chart = new QChart;
  auto* series = new QHorizontalStackedBarSeries;
  // Categories run bottom-up, so bars are appended last first to put the first on top.
  auto add = [&](const QString& name, const QString& color_key, auto&& value_of) {
    auto* set = new QBarSet(name);
    double sum = 0;
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
      const double ms = 1e3 * value_of(*it);
      set->append(ms);
      sum += ms;
    }
    if (sum <= 0) {  // a part no bar spends time on stays out of the legend
      delete set;
      return;
    }
    set->setColor(category_color(color_key));
    set->setBorderColor(category_color(color_key));
    series->append(set);
  };
  add("compute", "compute", [](const auto& b) { return b.compute; });
  add("recompute", "recompute", [](const auto& b) { return b.recompute; });
  add("optimizer", "optimizer", [](const auto& b) { return b.optimizer; });
  for (const auto& k : kinds) {
    add(QString("exposed %1 comm").arg(QString::fromStdString(k)), QString::fromStdString(k), [&](const auto& b) {
      auto it = b.exposed_comm.find(k);
      return it == b.exposed_comm.end() ? 0.0 : it->second;
    });
  }
  add("bubble", "bubble", [](const auto& b) { return b.bubble; });
  chart->addSeries(series);

  double max_ms = 0;
  for (const auto& b : stages)
    max_ms = std::max(max_ms, 1e3 * (b.compute + b.recompute + b.optimizer + b.exposed_comm_total() + b.bubble));
  auto* y = new QBarCategoryAxis;
  for (int i = int(labels.size()) - 1; i >= 0; --i) y->append(labels[i]);
  auto* x = new QValueAxis;
  x->setTitleText(axis_title);
  x->setRange(0, std::max(max_ms, 1e-3) * 1.02);
  x->applyNiceNumbers();
  x->setLabelFormat("%.0f");
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);
  return chart;
}

QChart* build_breakdown_chart(const sim::train::TrainingResult& r) {
  std::vector<sim::train::TimeBreakdown> stages = r.stage_breakdown;
  if (stages.empty()) stages.push_back(r.breakdown);
  QStringList labels;
  for (std::size_t s = 0; s < stages.size(); ++s) labels << QString("stage %1").arg(s);
  return build_breakdown_bars(stages, labels,
                              QString("Where the iteration goes (%1 ms)").arg(1e3 * r.iteration_time_s, 0, 'f', 1),
                              "milliseconds of one iteration");
}

std::vector<TimelineSpan> timeline_spans(const sim::train::TrainingResult& r, double merge_gap_s) {
  std::vector<TimelineSpan> out;
  const auto& g = r.graph;
  if (g.ops.empty() || r.times.end.size() != g.ops.size()) return out;
  std::map<int, int> lane_of_stage;  // first lane of each stage
  for (int i = 0; i < int(g.lanes.size()); ++i) lane_of_stage.emplace(g.lanes[std::size_t(i)].stage, i);
  std::map<int, int> row_base;
  for (const auto& [stage, lane] : lane_of_stage) row_base[lane] = 2 * stage;

  // Ops grouped by (row, category), sorted by start, then merged.
  std::map<std::pair<int, std::string>, std::vector<std::pair<double, double>>> runs;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    auto it = row_base.find(op.lane);
    if (it == row_base.end()) continue;
    const double s = r.times.start[i], e = r.times.end[i];
    if (e <= s) continue;
    const int row = it->second + (strat::is_comm(op.category) ? 1 : 0);
    runs[{row, strat::op_category_name(op.category)}].push_back({s, e});
  }
  for (auto& [key, v] : runs) {
    std::sort(v.begin(), v.end());
    TimelineSpan cur{key.first, QString::fromStdString(key.second), v.front().first, v.front().second};
    for (std::size_t i = 1; i < v.size(); ++i) {
      if (v[i].first <= cur.end_s + merge_gap_s) {
        cur.end_s = std::max(cur.end_s, v[i].second);
      } else {
        out.push_back(cur);
        cur.start_s = v[i].first, cur.end_s = v[i].second;
      }
    }
    out.push_back(cur);
  }
  return out;
}

QChart* build_timeline_chart(const sim::train::TrainingResult& r) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  const double T = std::max(r.iteration_time_s, r.times.makespan);
  // Merge gaps below 1/1500 of the iteration: invisible at any window width.
  const auto spans = timeline_spans(r, T / 1500.0);
  int rows = 0;
  for (const auto& s : spans) rows = std::max(rows, s.row + 1);
  rows += rows % 2;  // whole stages
  auto* x = new QValueAxis;
  x->setTitleText("milliseconds");
  x->setRange(0, 1e3 * T);
  x->applyNiceNumbers();
  x->setLabelFormat("%.0f");
  auto* y = new QCategoryAxis;
  y->setRange(0, std::max(rows, 1));
  y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  for (int row = rows - 1; row >= 0; --row) {
    // Row 0 on top: row k occupies [rows − k − 1, rows − k].
    const int stage = row / 2;
    y->append(row % 2 == 0 ? QString("stage %1 compute").arg(stage) : QString("stage %1 comm").arg(stage),
              double(rows - row));
  }
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  // One area series per (row, category): a step function that is high inside spans.
  std::map<std::pair<int, QString>, std::vector<const TimelineSpan*>> by;
  for (const auto& s : spans) by[{s.row, s.category}].push_back(&s);
  std::set<QString> in_legend;
  for (const auto& [key, list] : by) {
    const double base = double(rows - key.first - 1);
    const double lo = base + 0.15, hi = base + 0.85;
    auto* upper = new QLineSeries;
    auto* lower = new QLineSeries;
    upper->append(0, lo);
    for (const auto* s : list) {
      const double a = 1e3 * s->start_s, b = 1e3 * std::max(s->end_s, s->start_s + T * 1e-4);
      upper->append(a, lo);
      upper->append(a, hi);
      upper->append(b, hi);
      upper->append(b, lo);
    }
    upper->append(1e3 * T, lo);
    lower->append(0, lo);
    lower->append(1e3 * T, lo);
    auto* area = new QAreaSeries(upper, lower);
    area->setName(key.second);
    const QColor c = category_color(key.second);
    area->setColor(c);
    area->setBorderColor(c);
    QPen pen(c);
    pen.setWidthF(0.5);
    area->setPen(pen);
    chart->addSeries(area);
    area->attachAxis(x);
    area->attachAxis(y);
    const bool first = in_legend.insert(key.second).second;
    for (auto* m : chart->legend()->markers(area)) m->setVisible(first);
  }
  chart->setTitle(QString("One iteration, first GPU of each pipeline stage (%1 mode, %2 ops)")
                      .arg(QString::fromStdString(r.mode))
                      .arg(qulonglong(r.ops)));
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

}  // namespace infraplan::gui
