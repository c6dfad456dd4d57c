#include "gui/memory_tab.hpp"

#include "gui/tab_header.hpp"

#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace infraplan::gui {

QString kv_capacity_text(const Evaluation& ev) {
  if (ev.job != Job::Serving) return {};
  const double seqs = ev.serving_context > 0 ? double(ev.kv_capacity_tokens) / double(ev.serving_context) : 0;
  return QString(
             "KV capacity at gpu_memory_utilization %1: %2 tokens per replica (%3 sequences of %4 tokens)")
      .arg(ev.scenario.serving->gpu_memory_utilization, 0, 'f', 2)
      .arg(QLocale(QLocale::English).toString(qlonglong(ev.kv_capacity_tokens)))
      .arg(seqs, 0, 'f', 1)
      .arg(ev.serving_context);
}

MemoryTab::MemoryTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  headline_ = add_headline(layout, "memoryHeadline", "Enter a model and a cluster.");
  auto* split = new QSplitter(Qt::Horizontal);
  view_ = new QChartView;
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumWidth(360);
  split->addWidget(view_);
  table_ = new QTableWidget(0, 4);
  table_->setHorizontalHeaderLabels({"line", "GiB", "share", "how"});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setVisible(false);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(true);
  table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->setStyleSheet("QTableWidget::item { padding: 4px 3px; }");
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({640, 400});
  layout->addWidget(split, 1);
}

void MemoryTab::show(const Evaluation& ev) {
  const auto& L = ev.ledger;
  const QString kv = kv_capacity_text(ev);
  chart_ = build_ledger_chart(L, kv);
  QChart* old = view_->chart();
  view_->setChart(chart_.chart);
  delete old;

  const auto& sc = ev.scenario;
  const int gpus = sc.cluster.total_gpus();
  QString what = QString("<b>%1</b> on <b>%2</b> (%3 %4 of %5)")
                     .arg(QString::fromStdString(sc.model.name), QString::fromStdString(sc.cluster.name))
                     .arg(gpus)
                     .arg(gpus == 1 ? "GPU" : "GPUs")
                     .arg(QString::fromStdString(sc.cluster.gpu.name));
  if (ev.job == Job::Training) {
    const auto& t = *sc.training;
    what += QString(" — tp=%1 pp=%2 dp=%3 cp=%4 ep=%5 zero=%6, %7, micro-batch %8 × %9 tokens")
                .arg(t.tp)
                .arg(t.pp)
                .arg(t.dp)
                .arg(t.cp)
                .arg(t.ep)
                .arg(t.zero)
                .arg(QString::fromStdString(strat::precision_name(t.precision)))
                .arg(t.micro_batch)
                .arg(t.seq_len);
  } else {
    const auto& s = *sc.serving;
    what += QString(" — tp=%1 per replica, weights %2, KV %3, %4 sequences × %5 tokens")
                .arg(s.tp)
                .arg(QString::fromStdString(strat::weight_quant_name(s.weights)))
                .arg(QString::fromStdString(std::string(dtype_name(s.kv_dtype))))
                .arg(ev.serving_batch)
                .arg(ev.serving_context);
  }
  const QString color = L.fits() ? "#1b5e20" : "#b71c1c";
  QString text =
      what + QString("<br>%1: <span style='color:%2'><b>%3</b></span>")
                 .arg(QString::fromStdString(L.scope).toHtmlEscaped(), color, chart_.verdict.toHtmlEscaped());
  if (!kv.isEmpty()) text += "<br>" + kv.toHtmlEscaped();
  headline_->setText(text);

  const double total = L.total_bytes();
  table_->setRowCount(int(L.lines.size()) + 2);
  int row = 0;
  auto put = [&](const QString& a, double bytes, const QString& share, const QString& note) {
    table_->setItem(row, 0, new QTableWidgetItem(a));
    auto* gib = new QTableWidgetItem(QString::number(to_GiB(bytes), 'f', 2));
    gib->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table_->setItem(row, 1, gib);
    auto* sh = new QTableWidgetItem(share);
    sh->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    table_->setItem(row, 2, sh);
    auto* n = new QTableWidgetItem(note);
    n->setToolTip(note);
    table_->setItem(row, 3, n);
    ++row;
  };
  for (const auto& l : L.lines)
    put(QString::fromStdString(l.name), l.bytes,
        QString::number(total > 0 ? 100 * l.bytes / total : 0, 'f', 1) + "%", QString::fromStdString(l.note));
  put("total", total, "", "");
  put("capacity", L.capacity_bytes, "", "");
  for (int r = row - 2; r < row; ++r)
    for (int c = 0; c < 2; ++c) {
      QFont f = table_->item(r, c)->font();
      f.setBold(true);
      table_->item(r, c)->setFont(f);
    }
  table_->resizeColumnsToContents();
  table_->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
  table_->resizeRowsToContents();
}

QString MemoryTab::headline() const { return headline_->text(); }

}  // namespace infraplan::gui
