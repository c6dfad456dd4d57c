#pragma once
// ServingTab: the simulated request stream — throughput, goodput against the SLOs and latency
// percentiles in a headline, the TTFT/TPOT latency CDF and the engine's KV use over time.
#include <QWidget>

#include "gui/evaluation.hpp"

QT_BEGIN_NAMESPACE
class QChartView;
class QLabel;
QT_END_NAMESPACE

namespace infraplan::gui {

class ServingTab : public QWidget {
  Q_OBJECT

 public:
  explicit ServingTab(QWidget* parent = nullptr);

  /// Shows the simulation in `ev` (which must hold a serving result).
  void show(const Evaluation& ev);
  /// Says that results are missing or out of date (`text`), keeping the charts.
  void setNote(const QString& text);

  QChartView* cdfView() const { return cdf_; }
  QChartView* kvView() const { return kv_; }
  QString headline() const;

 private:
  QLabel* headline_ = nullptr;
  QLabel* note_ = nullptr;
  QChartView* cdf_ = nullptr;
  QChartView* kv_ = nullptr;
};

}  // namespace infraplan::gui
