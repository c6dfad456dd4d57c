#pragma once
// PlanTab: the planner's answer for the current model and cluster — the ranked candidates in a
// table, a chart (training: each layout's time breakdown; serving: the Pareto front of
// throughput per GPU against tokens/s per user) and the planner's explanation.
#include <QWidget>

#include "gui/evaluation.hpp"

QT_BEGIN_NAMESPACE
class QChartView;
class QLabel;
class QTableWidget;
class QTextBrowser;
QT_END_NAMESPACE

namespace infraplan::gui {

class PlanTab : public QWidget {
  Q_OBJECT

 public:
  explicit PlanTab(QWidget* parent = nullptr);

  /// Shows the plan in `ev` (a training or a serving plan).
  void show(const Evaluation& ev);
  /// Says that results are missing or out of date (`text`), keeping the rest.
  void setNote(const QString& text);

  QChartView* chartView() const { return chart_; }
  QTableWidget* table() const { return table_; }
  QString headline() const;

 signals:
  /// A candidate row was double-clicked (0 = the best).
  void candidateActivated(int index);

 private:
  void showTraining(const Evaluation& ev);
  void showServing(const Evaluation& ev);

  QLabel* headline_ = nullptr;
  QLabel* note_ = nullptr;
  QTableWidget* table_ = nullptr;
  QChartView* chart_ = nullptr;
  QTextBrowser* explanation_ = nullptr;
};

}  // namespace infraplan::gui
