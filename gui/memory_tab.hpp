#pragma once
// MemoryTab: the per-GPU memory ledger of the current inputs as a stacked bar against the
// GPU's capacity, with the verdict and, for serving, the KV-cache capacity; beside it the
// ledger's lines with how each was computed.
#include <QWidget>

#include "gui/evaluation.hpp"
#include "gui/ledger_chart.hpp"

QT_BEGIN_NAMESPACE
class QChartView;
class QLabel;
class QTableWidget;
QT_END_NAMESPACE

namespace infraplan::gui {

class MemoryTab : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryTab(QWidget* parent = nullptr);

  /// Shows the ledger of `ev` (replaces the chart and the table).
  void show(const Evaluation& ev);

  QChartView* chartView() const { return view_; }
  /// What the chart shows now (totals and verdict), for checks.
  const LedgerChart& chart() const { return chart_; }
  /// The headline under the chart ("fits (…)" plus KV capacity for serving).
  QString headline() const;

 private:
  QChartView* view_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* headline_ = nullptr;
  LedgerChart chart_;
};

/// "KV capacity: 123,456 tokens per replica (30.1 sequences of 4096)" for a serving evaluation.
QString kv_capacity_text(const Evaluation& ev);

}  // namespace infraplan::gui
