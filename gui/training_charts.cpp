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

std::vector<TimelineSpan> timeline_spans(const sim::train::TrainingResult& r, int bins) {
  std::vector<TimelineSpan> out;
  const auto& g = r.graph;
  if (g.ops.empty() || r.times.end.size() != g.ops.size() || bins < 1) return out;
  const double T = std::max(r.iteration_time_s, r.times.makespan);
  if (!(T > 0)) return out;
  std::map<int, int> lane_of_stage;  // first lane of each stage
  for (int i = 0; i < int(g.lanes.size()); ++i) lane_of_stage.emplace(g.lanes[std::size_t(i)].stage, i);
  std::map<int, int> row_base;  // lane → its compute row
  for (const auto& [stage, lane] : lane_of_stage) row_base[lane] = 2 * stage;
  const int rows = 2 * int(lane_of_stage.size());

  // Busy seconds per (row, bin, category).
  constexpr int kCategories = int(strat::OpCategory::CommDP) + 1;
  const double width = T / bins;
  std::vector<double> busy(std::size_t(rows) * std::size_t(bins) * kCategories, 0.0);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    auto it = row_base.find(op.lane);
    if (it == row_base.end()) continue;
    const double s = r.times.start[i], e = std::min(r.times.end[i], T);
    if (!(e > s)) continue;
    const int row = it->second + (strat::is_comm(op.category) ? 1 : 0);
    const int b0 = std::clamp(int(s / width), 0, bins - 1), b1 = std::clamp(int(e / width), 0, bins - 1);
    for (int b = b0; b <= b1; ++b) {
      const double overlap = std::min(e, (b + 1) * width) - std::max(s, b * width);
      if (overlap > 0)
        busy[(std::size_t(row) * std::size_t(bins) + std::size_t(b)) * kCategories + std::size_t(op.category)] += overlap;
    }
  }
  // Each bin shows its busiest category when the row is busy for at least half of it; runs of
  // equal bins become one span.
  for (int row = 0; row < rows; ++row) {
    int run_cat = -1, run_start = 0;
    auto close = [&](int end_bin) {
      if (run_cat >= 0)
        out.push_back({row, strat::op_category_name(strat::OpCategory(run_cat)), run_start * width, end_bin * width});
    };
    for (int b = 0; b < bins; ++b) {
      const double* cell = &busy[(std::size_t(row) * std::size_t(bins) + std::size_t(b)) * kCategories];
      int best = -1;
      double total = 0, best_v = 0;
      for (int c = 0; c < kCategories; ++c) {
        total += cell[c];
        if (cell[c] > best_v) best_v = cell[c], best = c;
      }
      const int cat = total >= 0.5 * width ? best : -1;
      if (cat != run_cat) {
        close(b);
        run_cat = cat, run_start = b;
      }
    }
    close(bins);
  }
  return out;
}

QChart* build_timeline_chart(const sim::train::TrainingResult& r) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  const double T = std::max(r.iteration_time_s, r.times.makespan);
  // 1200 bins: finer than the chart's pixels at any usual window width.
  const auto spans = timeline_spans(r, 1200);
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
      const double a = 1e3 * s->start_s, b = 1e3 * s->end_s;
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
