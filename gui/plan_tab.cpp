#include "gui/plan_tab.hpp"

#include "gui/tab_header.hpp"

#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "gui/ledger_chart.hpp"
#include "gui/plan_charts.hpp"

namespace infraplan::gui {

namespace {

void replace_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

QTableWidgetItem* cell(const QString& text, bool number) {
  auto* it = new QTableWidgetItem(text);
  if (number) it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return it;
}

void fill(QTableWidget* t, const QStringList& head, const std::vector<QStringList>& rows) {
  t->clear();
  t->setColumnCount(int(head.size()));
  t->setHorizontalHeaderLabels(head);
  t->setRowCount(int(rows.size()));
  for (int r = 0; r < int(rows.size()); ++r)
    for (int c = 0; c < int(rows[std::size_t(r)].size()); ++c) {
      const QString& v = rows[std::size_t(r)][c];
      bool number = false;
      v.toDouble(&number);
      t->setItem(r, c, cell(v, number || v.endsWith('%')));
    }
  t->resizeColumnsToContents();
}

QString html_list(const std::vector<std::string>& lines) {
  QString h = "<ul>";
  for (const auto& l : lines) h += "<li>" + QString::fromStdString(l).toHtmlEscaped() + "</li>";
  return h + "</ul>";
}

}  // namespace

PlanTab::PlanTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  headline_ = add_headline(layout, "planHeadline");
  note_ = add_note(layout, "Press “Plan: search layouts” to search the layouts of this model on this cluster.");
  auto* vertical = new QSplitter(Qt::Vertical);
  table_ = new QTableWidget;
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setToolTip("Double-click a layout to copy it into the form");
  table_->verticalHeader()->setDefaultSectionSize(24);
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_, &QTableWidget::cellDoubleClicked, this,
          [this](int row, int) { emit candidateActivated(row); });
  vertical->addWidget(table_);
  auto* horizontal = new QSplitter(Qt::Horizontal);
  chart_ = new QChartView;
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(220);
  explanation_ = new QTextBrowser;
  horizontal->addWidget(chart_);
  horizontal->addWidget(explanation_);
  horizontal->setStretchFactor(0, 3);
  horizontal->setStretchFactor(1, 2);
  vertical->addWidget(horizontal);
  vertical->setStretchFactor(0, 2);
  vertical->setStretchFactor(1, 3);
  layout->addWidget(vertical, 1);
}

void PlanTab::setNote(const QString& text) { set_note(note_, text); }

void PlanTab::show(const Evaluation& ev) {
  if (ev.train_plan) showTraining(ev);
  if (ev.serve_plan) showServing(ev);
  setNote({});
}

void PlanTab::showTraining(const Evaluation& ev) {
  const auto& p = *ev.train_plan;
  const auto& sc = ev.scenario;
  const QLocale en(QLocale::English);
  headline_->setText(
      QString("<b>Training plan</b>: %1 on %2 GPUs of %3, sequence %4, global batch %5; cost model: %6<br>"
              "%7 feasible layouts estimated (%8 estimates/s), %9 rejected, %10 s; the best %11 re-simulated")
          .arg(QString::fromStdString(sc.model.name))
          .arg(sc.cluster.total_gpus())
          .arg(QString::fromStdString(sc.cluster.gpu.name))
          .arg(sc.training->seq_len)
          .arg(sc.training->global_batch)
          .arg(QString::fromStdString(ev.cost_model))
          .arg(en.toString(qlonglong(p.layouts_visited)))
          .arg(en.toString(p.estimates_per_second, 'f', 0))
          .arg(en.toString(qlonglong(p.rejected.total())))
          .arg(p.search_seconds, 0, 'f', 1)
          .arg(p.candidates.size()));
  std::vector<QStringList> rows;
  int rank = 0;
  for (const auto& c : p.candidates) {
    rows.push_back({QString::number(++rank), QString::fromStdString(c.label()),
                    QString::number(c.iteration_time_s, 'f', 3), QString::number(c.estimate_s, 'f', 3),
                    QString::number(c.tokens_per_s, 'f', 0), QString::number(100 * c.mfu, 'f', 1) + "%",
                    QString::number(to_GiB(c.peak_bytes), 'f', 1), c.simulated ? "simulated" : "estimate",
                    QString::number(c.outlook.goodput.compute_s / 86400, 'f', 1),
                    QString::number(c.outlook.goodput.expected_wall_s / 86400, 'f', 1),
                    QString::number(100 * c.outlook.goodput.useful_fraction, 'f', 1) + "%",
                    QString::number(c.outlook.goodput.checkpoint_interval_s / 60, 'f', 0) + " min",
                    en.toString(c.outlook.cost.usd_total, 'f', 0)});
  }
  fill(table_,
       {"#", "layout", "iteration (s)", "estimate (s)", "tokens/s", "MFU", "peak GiB/GPU", "time from", "days",
        "days w/ failures", "useful", "checkpoint every", "USD"},
       rows);
  replace_chart(chart_, build_train_plan_chart(p));
  std::vector<std::string> rejected;
  for (const auto& [reason, n] : p.rejected.counts) rejected.push_back(std::to_string(n) + " × " + reason);
  explanation_->setHtml("<b>Why this ranking</b>" + html_list(p.explanation) + "<b>Rejected layouts</b>" +
                        html_list(rejected));
}

void PlanTab::showServing(const Evaluation& ev) {
  const auto& p = *ev.serve_plan;
  const auto& s = *ev.serve_search;
  headline_->setText(
      QString("<b>Serving plan</b>: %1 on %2 × %3, SLO TTFT ≤ %4 ms and TPOT ≤ %5 ms for %6% of "
              "requests; cost model: %7<br>%8 simulations in %9 s")
          .arg(QString::fromStdString(s.model.name))
          .arg(s.gpus)
          .arg(QString::fromStdString(s.gpu.name))
          .arg(s.workload.slo.ttft_ms)
          .arg(s.workload.slo.tpot_ms)
          .arg(100 * s.attainment, 0, 'f', 0)
          .arg(QString::fromStdString(ev.cost_model))
          .arg(p.simulations)
          .arg(p.search_seconds, 0, 'f', 1));
  const QLocale en(QLocale::English);
  (void)en;
  std::vector<QStringList> rows;
  int rank = 0;
  for (const auto& c : p.candidates) {
    rows.push_back({QString::number(++rank), QString::fromStdString(c.label()), QString::number(c.gpus),
                    QString::number(c.goodput_rps, 'f', 2), QString::number(c.goodput_rps_per_gpu, 'f', 3),
                    QString::number(100 * c.attainment, 'f', 1) + "%", QString::number(c.ttft_p90_ms, 'f', 0),
                    QString::number(c.tpot_p90_ms, 'f', 1), QString::number(c.tokens_per_s_per_user, 'f', 1),
                    c.meets_target ? "yes" : "no", QString::number(c.usd_per_hour, 'f', 2),
                    QString::number(c.usd_per_million_output_tokens, 'f', 3),
                    QString::number(c.usd_per_request, 'f', 5)});
  }
  fill(table_,
       {"#", "deployment", "GPUs", "goodput (req/s)", "per GPU", "SLO met", "TTFT p90 (ms)", "TPOT p90 (ms)",
        "tokens/s/user", "meets target", "USD/hour", "USD/M output tokens", "USD/request"},
       rows);
  replace_chart(chart_, build_pareto_chart(p));
  explanation_->setHtml("<b>Why this ranking</b>" + html_list(p.explanation));
}

QString PlanTab::headline() const { return headline_->text(); }

}  // namespace infraplan::gui
