#include "gui/ledger_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QStackedBarSeries>
#include <QValueAxis>
#include <algorithm>

#include "gui/palette.hpp"

namespace infraplan::gui {

LedgerChart build_ledger_chart(const strat::MemoryLedger& L, const QString& subtitle) {
  LedgerChart out;
  auto* chart = new QChart;
  out.chart = chart;
  out.verdict = QString::fromStdString(L.verdict());
  out.capacity_GiB = to_GiB(L.capacity_bytes);

  auto* bars = new QStackedBarSeries;
  bars->setBarWidth(0.45);
  int i = 0;
  for (const auto& line : L.lines) {
    const double gib = to_GiB(line.bytes);
    auto* set =
        new QBarSet(QString("%1 (%2 GiB)").arg(QString::fromStdString(line.name)).arg(gib, 0, 'f', 1));
    set->append(gib);
    set->setColor(series_color(i++));
    set->setBorderColor(Qt::white);
    bars->append(set);
    out.stack_total_GiB += gib;
  }
  chart->addSeries(bars);

  auto* capacity = new QLineSeries;
  capacity->setName(QString("capacity (%1 GiB)").arg(out.capacity_GiB, 0, 'f', 1));
  capacity->append(-0.5, out.capacity_GiB);
  capacity->append(0.5, out.capacity_GiB);
  QPen pen(QColor(0x21, 0x21, 0x21));
  pen.setWidth(2);
  pen.setStyle(Qt::DashLine);
  capacity->setPen(pen);
  chart->addSeries(capacity);

  auto* x = new QBarCategoryAxis;
  x->append("one GPU");
  auto* y = new QValueAxis;
  y->setTitleText("GiB per GPU");
  y->setRange(0, std::max(out.stack_total_GiB, out.capacity_GiB) * 1.08);
  y->applyNiceNumbers();
  y->setLabelFormat("%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  bars->attachAxis(x);
  bars->attachAxis(y);
  capacity->attachAxis(x);
  capacity->attachAxis(y);

  QString title = out.verdict;
  if (!title.isEmpty()) title[0] = title[0].toUpper();
  if (!subtitle.isEmpty())
    title += "<br><span style='font-size:small'>" + subtitle.toHtmlEscaped() + "</span>";
  chart->setTitle(title);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setAnimationOptions(QChart::NoAnimation);
  return out;
}

}  // namespace infraplan::gui
