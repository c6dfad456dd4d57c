#include "gui/training_charts.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QLineSeries>
#include <QPainter>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
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
    add(QString("exposed %1 comm").arg(QString::fromStdString(k)), QString::fromStdString(k),
        [&](const auto& b) {
          auto it = b.exposed_comm.find(k);
          return it == b.exposed_comm.end() ? 0.0 : it->second;
        });
  }
  add("host wait", "host", [](const auto& b) { return b.host_wait; });
  add("bubble", "bubble", [](const auto& b) { return b.bubble; });
  chart->addSeries(series);

  double max_ms = 0;
  for (const auto& b : stages)
    max_ms = std::max(max_ms, 1e3 * (b.compute + b.recompute + b.optimizer + b.exposed_comm_total() +
                                     b.host_wait + b.bubble));
  auto* y = new QBarCategoryAxis;
  for (int i = int(labels.size()) - 1; i >= 0; --i) y->append(labels[i]);
  if (labels.size() > 4) {  // many bars: smaller labels, so they are not elided
    QFont f = y->labelsFont();
    f.setPointSizeF(std::max(6.0, f.pointSizeF() * 4.0 / std::min<qsizetype>(labels.size(), 8)));
    y->setLabelsFont(f);
  }
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
  return build_breakdown_bars(
      stages, labels, QString("Where the iteration goes (%1 ms)").arg(1e3 * r.iteration_time_s, 0, 'f', 1),
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

QImage render_timeline(const std::vector<TimelineRow>& rows, int row_px) {
  if (rows.empty()) return {};
  const int slices = int(rows.front().share.empty() ? 0 : rows.front().share.begin()->second.size());
  int width = slices;
  for (const auto& row : rows)
    for (const auto& [cat, v] : row.share) width = std::max(width, int(v.size()));
  if (width < 1) width = 1;
  QImage img(width, int(rows.size()) * row_px, QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::transparent);
  QPainter p(&img);
  const double band = 0.8 * row_px;
  for (int k = 0; k < int(rows.size()); ++k) {
    const auto& row = rows[std::size_t(k)];
    const double bottom = k * row_px + 0.9 * row_px;
    for (int x = 0; x < width; ++x) {
      double total = 0;
      for (const auto& [cat, v] : row.share) total += x < int(v.size()) ? v[std::size_t(x)] : 0;
      const double scale = total > 1 ? 1 / total : 1;  // overlapping communication streams
      double y = bottom;
      for (const char* name : kOrder) {
        auto it = row.share.find(QString::fromLatin1(name));
        if (it == row.share.end() || x >= int(it->second.size())) continue;
        const double h = band * it->second[std::size_t(x)] * scale;
        if (h <= 0) continue;
        p.fillRect(QRectF(x, y - h, 1, h), category_color(it->first));
        y -= h;
      }
    }
  }
  return img;
}

QChart* build_timeline_chart(const sim::train::TrainingResult& r, const std::vector<TimelineRow>& rows,
                             QImage image) {
  auto* chart = new QChart;
  chart->setAnimationOptions(QChart::NoAnimation);
  if (image.isNull()) image = render_timeline(rows);
  const double T = std::max(r.iteration_time_s, r.times.makespan);
  const int n = int(rows.size());
  auto* x = new QValueAxis;
  x->setTitleText("milliseconds");
  x->setRange(0, 1e3 * T);
  x->applyNiceNumbers();  // the picture then covers the share T / max of the plot's width
  x->setLabelFormat("%.0f");
  const double covered = x->max() > 0 ? std::min(1.0, 1e3 * T / x->max()) : 1.0;
  auto* y = new QCategoryAxis;
  y->setRange(0, std::max(n, 1));
  y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  for (int k = n - 1; k >= 0; --k) {
    // Row k (0 on top) occupies [n − k − 1, n − k].
    const auto& row = rows[std::size_t(k)];
    y->append(QString("stage %1 %2").arg(row.stage).arg(row.comm ? "comm" : "compute"), double(n - k));
  }
  if (n > 8) {  // many rows: smaller labels, so they are not elided
    QFont f = y->labelsFont();
    f.setPointSizeF(std::max(6.0, f.pointSizeF() * 8.0 / std::min(n, 16)));
    y->setLabelsFont(f);
  }
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  // Legend: one empty series per category present, in drawing order.
  std::set<QString> present;
  for (const auto& row : rows)
    for (const auto& [cat, v] : row.share) present.insert(cat);
  for (const char* name : kOrder) {
    if (!present.count(QString::fromLatin1(name))) continue;
    auto* key = new QLineSeries;
    key->setName(QString::fromLatin1(name));
    key->setPen(QPen(category_color(QString::fromLatin1(name)), 6));
    chart->addSeries(key);
    key->attachAxis(x);
    key->attachAxis(y);
  }
  // The picture follows the plot area (the x axis spans exactly the iteration).
  chart->setPlotAreaBackgroundVisible(true);
  QObject::connect(chart, &QChart::plotAreaChanged, chart, [chart, image, covered](const QRectF& area) {
    if (image.isNull() || area.width() < 1 || area.height() < 1) return;
    const QSize size(std::max(1, int(std::lround(area.width() * covered))), int(std::lround(area.height())));
    QImage scaled = image.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    QImage canvas(area.size().toSize(), QImage::Format_ARGB32_Premultiplied);
    canvas.fill(Qt::white);
    QPainter(&canvas).drawImage(0, 0, scaled);
    QBrush brush(canvas);
    brush.setTransform(QTransform::fromTranslate(area.x(), area.y()));
    chart->setPlotAreaBackgroundBrush(brush);
  });
  chart->setTitle(QString("One iteration on the first GPU of each pipeline stage (%1 mode, %2 ops); "
                          "height = share of time")
                      .arg(QString::fromStdString(r.mode))
                      .arg(qulonglong(r.ops)));
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

}  // namespace infraplan::gui
