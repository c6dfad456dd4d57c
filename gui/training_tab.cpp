#include "gui/training_tab.hpp"

#include "gui/tab_header.hpp"

#include <QChartView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QVBoxLayout>

#include "gui/ledger_chart.hpp"
#include "gui/training_charts.hpp"

namespace infraplan::gui {

namespace {

void replace_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

QString seconds_text(double s) {
  if (s >= 1) return QString::number(s, 'f', 3) + " s";
  return QString::number(1e3 * s, 'f', 1) + " ms";
}

}  // namespace

TrainingTab::TrainingTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  headline_ = add_headline(layout, "trainingHeadline");
  note_ = add_note(layout, "Press “Run simulation” to simulate one training iteration.");
  add_chart_pair(layout, breakdown_, timeline_, 2, 3);
}

void TrainingTab::setNote(const QString& text) { set_note(note_, text); }

void TrainingTab::show(const Evaluation& ev, const std::vector<TimelineRow>& timeline, const QImage& image) {
  const auto& r = *ev.training;
  const auto& t = *ev.scenario.training;
  const QLocale en(QLocale::English);
  QString h = QString(
                  "<b>%1</b> on <b>%2</b> (%3 GPU%15): tp=%4 pp=%5 dp=%6 cp=%7 ep=%8 zero=%9, %10, %11, "
                  "global batch %12 × %13 tokens in %14 micro-batches")
                  .arg(QString::fromStdString(ev.scenario.model.name),
                       QString::fromStdString(ev.scenario.cluster.name))
                  .arg(ev.scenario.cluster.total_gpus())
                  .arg(t.tp)
                  .arg(t.pp)
                  .arg(t.dp)
                  .arg(t.cp)
                  .arg(t.ep)
                  .arg(t.zero)
                  .arg(QString::fromStdString(strat::pp_schedule_name(t.pp_schedule)),
                       QString::fromStdString(strat::precision_name(t.precision)))
                  .arg(t.global_batch)
                  .arg(t.seq_len)
                  .arg(t.micro_batches())
                  .arg(ev.scenario.cluster.total_gpus() == 1 ? "" : "s");
  h += QString(
           "<br>iteration <b>%1</b> · <b>%2</b> tokens/s · MFU <b>%3%</b> · HFU %4% · peak %5 of %6 GiB per "
           "GPU")
           .arg(seconds_text(r.iteration_time_s))
           .arg(en.toString(r.tokens_per_s, 'f', 0))
           .arg(100 * r.mfu, 0, 'f', 1)
           .arg(100 * r.hfu, 0, 'f', 1)
           .arg(to_GiB(r.peak_bytes), 0, 'f', 1)
           .arg(to_GiB(r.ledger.capacity_bytes), 0, 'f', 1);
  if (!r.ledger.fits()) h += " <span style='color:#b71c1c'>(does not fit)</span>";
  if (ev.training_range)
    h += QString("<br>iteration range <b>%1 … %2</b> <span style='color:#555'>(%3)</span>")
             .arg(seconds_text((*ev.training_range)[0]), seconds_text((*ev.training_range)[1]),
                  QString::fromStdString(ev.uncertainty).toHtmlEscaped());
  if (ev.training_interval)
    h += QString("<br>80% interval <b>%1 … %2</b> <span style='color:#555'>(%3)</span>")
             .arg(seconds_text((*ev.training_interval)[0]), seconds_text((*ev.training_interval)[1]),
                  QString::fromStdString(ev.training_interval_note).toHtmlEscaped());
  h += QString("<br><span style='color:#555'>cost model: %1; %2 mode, %3 backend; %4 ops on %5 lanes</span>")
           .arg(QString::fromStdString(ev.cost_model), QString::fromStdString(r.mode),
                QString::fromStdString(r.backend))
           .arg(qulonglong(r.ops))
           .arg(qulonglong(r.lanes));
  if (ev.training_outlook) {
    const auto& g = ev.training_outlook->goodput;
    const auto& k = ev.training_outlook->cost;
    h += QString(
             "<br>whole run of %1 tokens: <b>%2</b> days without failures, <b>%3</b> days with them (useful "
             "%4%, one interruption every %5 h) · checkpoint every <b>%6 min</b> (Young/Daly) · <b>%7</b> USD "
             "(%8 per million tokens at %9 per GPU-hour)")
             .arg(en.toString(g.train_tokens, 'g', 3))
             .arg(g.compute_s / 86400, 0, 'f', 1)
             .arg(g.expected_wall_s / 86400, 0, 'f', 1)
             .arg(100 * g.useful_fraction, 0, 'f', 1)
             .arg(g.job_mtbf_s / 3600, 0, 'f', 1)
             .arg(g.checkpoint_interval_s / 60, 0, 'f', 0)
             .arg(en.toString(k.usd_total, 'f', 0))
             .arg(k.usd_per_million_tokens, 0, 'f', 3)
             .arg(k.price_per_gpu_hour, 0, 'f', 2);
  }
  for (const auto& w : r.warnings)
    h += "<br><span style='color:#8a6d00'>warning: " + QString::fromStdString(w).toHtmlEscaped() + "</span>";
  headline_->setText(h);
  setNote({});
  replace_chart(breakdown_, build_breakdown_chart(r));
  replace_chart(timeline_, build_timeline_chart(r, timeline, image));
}

QString TrainingTab::headline() const { return headline_->text(); }

}  // namespace infraplan::gui
