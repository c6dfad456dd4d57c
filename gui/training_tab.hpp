#pragma once
// TrainingTab: the simulated training iteration — iteration time, tokens/s, MFU/HFU and peak
// memory in a headline, the time breakdown per pipeline stage and the per-stage timeline.
#include <QWidget>

#include "gui/evaluation.hpp"

QT_BEGIN_NAMESPACE
class QChartView;
class QLabel;
QT_END_NAMESPACE

namespace infraplan::gui {

class TrainingTab : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingTab(QWidget* parent = nullptr);

  /// Shows the simulation in `ev` (which must hold a training result).
  void show(const Evaluation& ev);
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
