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
  add("host wait", "host", [](const auto& b) { return b.host_wait; });
  add("bubble", "bubble", [](const auto& b) { return b.bubble; });
  chart->addSeries(series);

  double max_ms = 0;
  for (const auto& b : stages)
    max_ms = std::max(max_ms,
                      1e3 * (b.compute + b.recompute + b.optimizer + b.exposed_comm_total() + b.host_wait + b.bubble));
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

namespace {

// Categories in drawing order (bottom to top within a row).
const char* const kOrder[] = {"compute", "recompute", "optimizer", "tp", "cp", "ep", "pp", "dp"};

}  // namespace

std::vector<TimelineRow> timeline_rows(const sim::train::TrainingResult& r, int slices) {
  std::vector<TimelineRow> rows;
  const auto& g = r.graph;
  if (g.ops.empty() || r.times.end.size() != g.ops.size() || slices < 1) return rows;
  const double T = std::max(r.iteration_time_s, r.times.makespan);
  if (!(T > 0)) return rows;
  std::map<int, int> lane_of_stage;  // first lane of each stage
  for (int i = 0; i < int(g.lanes.size()); ++i) lane_of_stage.emplace(g.lanes[std::size_t(i)].stage, i);
  std::map<int, int> row_of_lane;  // lane → its compute row
  for (const auto& [stage, lane] : lane_of_stage) {
    row_of_lane[lane] = int(rows.size());
    for (bool comm : {false, true}) rows.push_back({stage, comm, T / slices, {}});
  }
  const double width = T / slices;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    auto it = row_of_lane.find(op.lane);
    if (it == row_of_lane.end()) continue;
    const double s = r.times.start[i], e = std::min(r.times.end[i], T);
    if (!(e > s)) continue;
    // The compute stream and the communication streams; host-side issue ops are not GPU work.
    const bool comm = strat::is_comm(op.category);
    if (!comm && op.stream != strat::Stream::Compute) continue;
    auto& row = rows[std::size_t(it->second + (comm ? 1 : 0))];
    auto& share = row.share[QString::fromLatin1(strat::op_category_name(op.category))];
    if (share.empty()) share.assign(std::size_t(slices), 0.0);
    const int b0 = std::clamp(int(s / width), 0, slices - 1), b1 = std::clamp(int(e / width), 0, slices - 1);
    for (int b = b0; b <= b1; ++b) {
      const double overlap = std::min(e, (b + 1) * width) - std::max(s, b * width);
      if (overlap > 0) share[std::size_t(b)] += overlap / width;
    }
  }
  return rows;
}

QChart* build_timeline_chart(const sim::train::TrainingResult& r) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  const double T = std::max(r.iteration_time_s, r.times.makespan);
  const int slices = 800;  // about one per pixel of a full-width chart
  const auto rows = timeline_rows(r, slices);
  const int n = int(rows.size());
  auto* x = new QValueAxis;
  x->setTitleText("milliseconds");
  x->setRange(0, 1e3 * T);
  x->applyNiceNumbers();
  x->setLabelFormat("%.0f");
  auto* y = new QCategoryAxis;
  y->setRange(0, std::max(n, 1));
  y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  for (int k = n - 1; k >= 0; --k) {
    // Row k (0 on top) occupies [n − k − 1, n − k].
    const auto& row = rows[std::size_t(k)];
    y->append(QString("stage %1 %2").arg(row.stage).arg(row.comm ? "comm" : "compute"), double(n - k));
  }
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  // Step function through slice values, one point pair per run of equal values.
  auto steps = [&](QLineSeries* line, const std::vector<double>& v) {
    int k = 0;
    while (k < slices) {
      int j = k;
      while (j + 1 < slices && v[std::size_t(j + 1)] == v[std::size_t(k)]) ++j;
      line->append(1e3 * k * T / slices, v[std::size_t(k)]);
      line->append(1e3 * (j + 1) * T / slices, v[std::size_t(k)]);
      k = j + 1;
    }
  };
  std::set<QString> in_legend;
  for (int k = 0; k < n; ++k) {
    const auto& row = rows[std::size_t(k)];
    const double base = double(n - k - 1) + 0.1, height = 0.8;
    std::vector<double> total(std::size_t(slices), 0.0);
    for (const auto& [cat, v] : row.share)
      for (int b = 0; b < slices; ++b) total[std::size_t(b)] += v[std::size_t(b)];
    std::vector<double> bottom(std::size_t(slices), base);
    for (const char* name : kOrder) {
      auto it = row.share.find(QString::fromLatin1(name));
      if (it == row.share.end()) continue;
      std::vector<double> top(static_cast<std::size_t>(slices));
      for (int b = 0; b < slices; ++b) {
        const double scale = total[std::size_t(b)] > 1 ? 1 / total[std::size_t(b)] : 1;  // overlapping streams
        top[std::size_t(b)] = bottom[std::size_t(b)] + height * it->second[std::size_t(b)] * scale;
      }
      auto* upper = new QLineSeries;
      auto* lower = new QLineSeries;
      steps(upper, top);
      steps(lower, bottom);
      auto* area = new QAreaSeries(upper, lower);
      area->setName(it->first);
      const QColor c = category_color(it->first);
      area->setColor(c);
      area->setBorderColor(c);
      area->setPen(Qt::NoPen);  // a border would draw a line where the share is 0
      chart->addSeries(area);
      area->attachAxis(x);
      area->attachAxis(y);
      const bool first = in_legend.insert(it->first).second;
      for (auto* m : chart->legend()->markers(area)) m->setVisible(first);
      bottom = std::move(top);
    }
  }
  chart->setTitle(QString("One iteration on the first GPU of each pipeline stage (%1 mode, %2 ops); "
                          "height = share of time")
                      .arg(QString::fromStdString(r.mode))
                      .arg(qulonglong(r.ops)));
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

}  // namespace infraplan::gui
