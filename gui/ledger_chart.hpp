#pragma once
// The Memory tab's chart: one GPU's memory ledger as a stacked bar (one segment per ledger line,
// GiB) against a dashed capacity line, titled with the ledger's verdict.
#include <QString>

#include "strategies/memory_ledger.hpp"

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace infraplan::gui {

struct LedgerChart {
  QChart* chart = nullptr;     ///< owned by the caller (give it to a QChartView)
  double stack_total_GiB = 0;  ///< sum of the stacked segments, GiB (2^30 B)
  double capacity_GiB = 0;     ///< height of the capacity line, GiB
  QString verdict;             ///< the ledger's verdict ("fits (…)" / "does not fit by …")
};

/// Builds the chart. `subtitle` (e.g. KV capacity for serving) goes under the verdict.
LedgerChart build_ledger_chart(const strat::MemoryLedger& ledger, const QString& subtitle = {});

/// Bytes → GiB (2^30 B).
inline double to_GiB(double bytes) { return bytes / 1073741824.0; }

}  // namespace infraplan::gui
