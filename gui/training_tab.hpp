#pragma once
// TrainingTab: the simulated training iteration — iteration time, tokens/s, MFU/HFU and peak
// memory in a headline, the time breakdown per pipeline stage and the per-stage timeline.
#include <QImage>
#include <QWidget>

#include "gui/evaluation.hpp"
#include "gui/training_charts.hpp"

QT_BEGIN_NAMESPACE
class QChartView;
class QLabel;
QT_END_NAMESPACE

namespace infraplan::gui {

class TrainingTab : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingTab(QWidget* parent = nullptr);

  /// Shows the simulation in `ev` (which must hold a training result) with its timeline rows and
  /// their picture (timeline_rows and render_timeline of the result, made off the GUI thread).
  void show(const Evaluation& ev, const std::vector<TimelineRow>& timeline, const QImage& image);
  /// Says that results are missing or out of date (`text`), keeping the charts.
  void setNote(const QString& text);

  QChartView* breakdownView() const { return breakdown_; }
  QChartView* timelineView() const { return timeline_; }
  QString headline() const;

 private:
  QLabel* headline_ = nullptr;
  QLabel* note_ = nullptr;
  QChartView* breakdown_ = nullptr;
  QChartView* timeline_ = nullptr;
};

}  // namespace infraplan::gui
