#include "gui/main_window.hpp"

#include <QApplication>
#include <QChartView>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/export.hpp"
#include "gui/input_panel.hpp"
#include "gui/memory_tab.hpp"
#include "gui/plan_tab.hpp"
#include "gui/serving_tab.hpp"
#include "gui/training_tab.hpp"
#include "infraplan_build_info.hpp"
#include "common/error.hpp"
#include "report/report.hpp"

namespace infraplan::gui {

namespace {

Outcome run_evaluation(const EvaluationRequest& req) {
  try {
    Outcome out;
    out.evaluation = evaluate(req);
    // Walking a million ops and painting their picture is worker work too; the GUI thread only
    // puts the picture on screen.
    if (out.evaluation->training) {
      out.timeline = timeline_rows(*out.evaluation->training, kTimelineSlices);
      out.timeline_image = render_timeline(out.timeline);
    }
    return out;
  } catch (const std::exception& e) {  // infraplan::Error and the library's other exceptions
    return {nullptr, {}, {}, QString::fromUtf8(e.what())};
  } catch (...) {
    return {nullptr, {}, {}, "internal error: an exception of unknown type stopped the evaluation"};
  }
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("infraplan — cluster planner");
  inputs_ = new InputPanel;
  auto* scroll = new QScrollArea;
  scroll->setWidget(inputs_);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(inputs_->sizeHint().width() + 24);

  tabs_ = new QTabWidget;
  memory_ = new MemoryTab;
  training_ = new TrainingTab;
  serving_ = new ServingTab;
  plan_ = new PlanTab;
  tabs_->insertTab(MemoryTabIndex, memory_, "Memory");
  tabs_->insertTab(TrainingTabIndex, training_, "Training");
  tabs_->insertTab(ServingTabIndex, serving_, "Serving");
  tabs_->insertTab(PlanTabIndex, plan_, "Plan");

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(scroll);
  split->addWidget(tabs_);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);

  status_ = new QLabel;
  busy_bar_ = new QProgressBar;
  busy_bar_->setRange(0, 0);  // indeterminate: a busy indicator
  busy_bar_->setMaximumWidth(160);
  busy_bar_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(busy_bar_);

  watcher_ = new QFutureWatcher<Outcome>(this);
  connect(watcher_, &QFutureWatcher<Outcome>::finished, this, &MainWindow::onFinished);
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(250);
  connect(debounce_, &QTimer::timeout, this, [this] { evaluate(Action::Memory); });
  connect(inputs_, &InputPanel::changed, debounce_, qOverload<>(&QTimer::start));
  connect(inputs_, &InputPanel::runRequested, this, [this] { evaluate(Action::Simulate); });
  connect(inputs_, &InputPanel::planRequested, this, [this] { evaluate(Action::Plan); });
  connect(plan_, &PlanTab::candidateActivated, this, &MainWindow::applyPlanCandidate);

  buildMenus();
  resize(1360, 860);
  evaluate(Action::Memory);
}

MainWindow::~MainWindow() {
  // A simulation cannot be interrupted; let it end before the window's members go.
  watcher_->waitForFinished();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open scenario…", QKeySequence::Open, this, &MainWindow::onOpenScenario);
  file->addAction("Open &model config (config.json)…", this, &MainWindow::onOpenModelConfig);
  file->addSeparator();
  file->addAction("Export results as &JSON…", QKeySequence("Ctrl+E"), this, &MainWindow::onExportJson);
  file->addAction("Export chart as &PNG…", QKeySequence("Ctrl+Shift+E"), this, &MainWindow::onExportPng);
  file->addAction("Export &report (HTML)…", QKeySequence("Ctrl+Shift+R"), this, &MainWindow::onExportReport);
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  QMenu* run = menuBar()->addMenu("&Run");
  run->addAction("Run &simulation", QKeySequence("Ctrl+R"), this, [this] { evaluate(Action::Simulate); });
  run->addAction("&Plan: search layouts", QKeySequence("Ctrl+L"), this, [this] { evaluate(Action::Plan); });
}

void MainWindow::evaluate(Action action) {
  debounce_->stop();
  const Inputs in = inputs_->inputs();
  EvaluationRequest req;
  try {
    req.scenario = to_scenario(in);
  } catch (const std::exception& e) {
    inputs_->showError(QString::fromUtf8(e.what()));
    emit evaluationFinished(false);
    return;
  }
  req.base_dir = in.base_dir;
  req.origin = in.origin;
  req.job = in.job;
  req.action = action;
  if (action == Action::Plan) {
    // Progress lines arrive on the worker thread; the label is updated on the GUI thread.
    QPointer<QLabel> label = status_;
    req.progress = [label](const std::string& line) {
      const QString text = QString::fromStdString(line);
      QMetaObject::invokeMethod(
          label,
          [label, text] {
            if (label) label->setText("Planning: " + text);
          },
          Qt::QueuedConnection);
    };
  }
  req.serving_batch = in.serving.batch;
  req.serving_context = in.serving.context;
  start(req);
}

void MainWindow::start(const EvaluationRequest& req) {
  if (running_) {
    // The newest request waits; a queued simulation or plan is not downgraded by a later edit.
    const Action queued = pending_ ? pending_->action : Action::Memory;
    pending_ = req;
    if (req.action == Action::Memory) pending_->action = queued;
    return;
  }
  running_ = req;
  busy_bar_->setVisible(true);
  const bool training = req.job == Job::Training;
  showStatus(req.action == Action::Simulate
                 ? (training ? "Simulating one training iteration…" : "Simulating the serving workload…")
             : req.action == Action::Plan ? (training ? "Searching training layouts…"
                                                      : "Searching serving deployments (simulating each)…")
                                          : "Computing the memory ledger…");
  watcher_->setFuture(QtConcurrent::run(run_evaluation, req));
}

void MainWindow::onFinished() {
  const Outcome out = watcher_->result();
  const Action action = running_ ? running_->action : Action::Memory;
  running_.reset();
  if (!out.evaluation) {
    inputs_->showError(out.error);
    showStatus("Not evaluated: the inputs are invalid (previous results kept).");
  } else {
    inputs_->showError({});
    const auto& ev = out.evaluation;
    memory_ev_ = ev;
    memory_->show(*ev);
    if (ev->training) {
      training_ev_ = ev;
      training_->show(*ev, out.timeline, out.timeline_image);
    } else if (training_ev_ && ev->job == Job::Training && training_ev_->scenario.raw != ev->scenario.raw) {
      training_->setNote("The inputs changed since this simulation; press “Run simulation” to update it.");
    }
    if (ev->serving) {
      serving_ev_ = ev;
      serving_->show(*ev);
    } else if (serving_ev_ && ev->job == Job::Serving && serving_ev_->scenario.raw != ev->scenario.raw) {
      serving_->setNote("The inputs changed since this simulation; press “Run simulation” to update it.");
    }
    if (ev->train_plan || ev->serve_plan) {
      plan_ev_ = ev;
      plan_->show(*ev);
    } else if (plan_ev_ && plan_ev_->scenario.raw != ev->scenario.raw) {
      plan_->setNote("The inputs changed since this plan; press “Plan: search layouts” to update it.");
    }
    if (action == Action::Simulate)
      tabs_->setCurrentIndex(ev->job == Job::Training ? TrainingTabIndex : ServingTabIndex);
    if (action == Action::Plan) tabs_->setCurrentIndex(PlanTabIndex);
    QString memory = QString::fromStdString(ev->ledger.verdict());
    if (ev->job == Job::Serving)
      memory =
          QString("%1 sequences × %2 tokens: %3").arg(ev->serving_batch).arg(ev->serving_context).arg(memory);
    showStatus(QString::fromStdString(ev->scenario.model.name + " on " + ev->scenario.cluster.name) +
               ", memory " + (ev->job == Job::Serving ? "at " : "") + memory);
  }
  if (pending_) {
    const EvaluationRequest next = *pending_;
    pending_.reset();
    start(next);
  } else {
    busy_bar_->setVisible(false);
  }
  emit evaluationFinished(bool(out.evaluation));
}

bool MainWindow::busy() const {
  return running_.has_value() || pending_.has_value() || debounce_->isActive();
}

bool MainWindow::waitUntilIdle(int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (busy()) {
    if (t.elapsed() > timeout_ms) return false;
    if (debounce_->isActive()) evaluate(Action::Memory);
    QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
  }
  return true;
}

void MainWindow::showStatus(const QString& text) { status_->setText(text); }

bool MainWindow::openScenario(const QString& path) {
  try {
    const Json j = read_json_file(path.toStdString());
    const std::string dir = QFileInfo(path).absolutePath().toStdString();
    Inputs in = inputs_from_scenario(j, dir);
    in.origin = path.toStdString();
    if (!in.base.contains("name")) in.base["name"] = QFileInfo(path).completeBaseName().toStdString();
    inputs_->setInputs(in);
  } catch (const std::exception& e) {
    inputs_->showError(QString::fromUtf8(e.what()));
    showStatus("Could not open " + path);
    return false;
  }
  setWindowTitle("infraplan — " + QFileInfo(path).fileName());
  evaluate(Action::Memory);
  return true;
}

void MainWindow::openModelConfig(const QString& path) {
  Inputs in = inputs_->inputs();
  in.model = QFileInfo(path).absoluteFilePath().toStdString();
  in.model_from_base = false;
  inputs_->setInputs(in);
  evaluate(Action::Memory);
}

bool MainWindow::applyPlanCandidate(int index) {
  if (!plan_ev_ || index < 0) return false;
  Inputs in = inputs_->inputs();
  if (plan_ev_->train_plan) {
    const auto& list = plan_ev_->train_plan->candidates;
    if (index >= int(list.size())) return false;
    const auto& c = list[std::size_t(index)].cfg;
    in.job = Job::Training;
    auto& t = in.training;
    t.tp = c.tp, t.pp = c.pp, t.dp = c.dp, t.cp = c.cp, t.ep = c.ep, t.sp = c.sp, t.zero = c.zero;
    t.micro_batch = c.micro_batch, t.global_batch = c.global_batch, t.seq_len = c.seq_len;
    t.recompute = model::recompute_name(c.recompute);
    t.pp_schedule = strat::pp_schedule_name(c.pp_schedule);
    t.precision = strat::precision_name(c.precision);
    if (!in.base.is_object()) in.base = Json::object();
    if (c.pp_schedule == strat::PpSchedule::Interleaved)
      in.base["training"]["pp_virtual_stages"] = c.pp_virtual_stages;
    // HSDP: the shard group travels with the layout (0 = all of DP).
    // The plan splits layers evenly: a scenario's own pp_layers would not match its pp.
    if (in.base.contains("training") && in.base["training"].is_object()) {
      in.base["training"].erase("dp_shard");
      in.base["training"].erase("pp_layers");
    }
    if (c.zero >= 1 && c.dp_shard < c.dp) in.base["training"]["dp_shard"] = c.dp_shard;
  } else if (plan_ev_->serve_plan) {
    const auto& list = plan_ev_->serve_plan->candidates;
    if (index >= int(list.size())) return false;
    const auto& c = list[std::size_t(index)];
    if (c.mode != "aggregated") {
      showStatus("Disaggregated deployments are set in a scenario file (serving.pd); see docs/serving.md.");
      return false;
    }
    in.job = Job::Serving;
    in.serving.tp = c.tp;
    in.serving.replicas = c.replicas;
    in.serving.weights = strat::weight_quant_name(c.weights);
    in.serving.kv_dtype = std::string(dtype_name(c.kv_dtype));
    if (!in.base.is_object()) in.base = Json::object();
    in.base["serving"]["max_batched_tokens"] = c.max_batched_tokens;
  } else {
    return false;
  }
  inputs_->setInputs(in);
  showStatus(QString("Candidate #%1 copied into the form.").arg(index + 1));
  evaluate(Action::Memory);
  return true;
}

void MainWindow::onOpenScenario() {
  const QString path = QFileDialog::getOpenFileName(this, "Open scenario", "scenarios", "Scenarios (*.json)");
  if (!path.isEmpty()) openScenario(path);
}

void MainWindow::onOpenModelConfig() {
  const QString path = QFileDialog::getOpenFileName(this, "Open model config", {},
                                                    "Hugging Face config.json or model JSON (*.json)");
  if (!path.isEmpty()) openModelConfig(path);
}

Json MainWindow::currentResultsJson() const {
  switch (tabs_->currentIndex()) {
    case MemoryTabIndex:
      return memory_ev_ ? memory_ev_->memory_json() : Json();
    case TrainingTabIndex:
      return training_ev_ ? training_ev_->training_json() : Json();
    case ServingTabIndex:
      return serving_ev_ ? serving_ev_->serving_json() : Json();
    case PlanTabIndex:
      return plan_ev_ ? plan_ev_->plan_json() : Json();
    default:
      return Json();
  }
}

QChartView* MainWindow::currentChartView() const {
  switch (tabs_->currentIndex()) {
    case MemoryTabIndex:
      return memory_->chartView();
    case TrainingTabIndex:
      return training_ev_ ? training_->timelineView() : nullptr;
    case ServingTabIndex:
      return serving_ev_ ? serving_->cdfView() : nullptr;
    case PlanTabIndex:
      return plan_ev_ ? plan_->chartView() : nullptr;
    default:
      return nullptr;
  }
}

bool MainWindow::exportResultsJson(const QString& path, QString* error) {
  const Json j = currentResultsJson();
  if (j.is_null()) {
    if (error)
      *error = "The " + tabs_->tabText(tabs_->currentIndex()) + " tab has no results yet; run it first.";
    return false;
  }
  return save_json(path, j, error);
}

bool MainWindow::exportChartPng(const QString& path, QString* error) {
  QChartView* view = currentChartView();
  if (!view || !view->chart()) {
    if (error)
      *error = "The " + tabs_->tabText(tabs_->currentIndex()) + " tab has no chart yet; run it first.";
    return false;
  }
  return save_widget_png(path, view, error);
}

bool MainWindow::exportReport(const QString& path, QString* error) {
  const Json j = currentResultsJson();
  if (j.is_null()) {
    if (error)
      *error = "The " + tabs_->tabText(tabs_->currentIndex()) + " tab has no results yet; run it first.";
    return false;
  }
  report::ReportInputs in;
  in.results = {j};
  in.origins = {"the " + tabs_->tabText(tabs_->currentIndex()).toStdString() + " tab"};
  in.generated_at = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
  in.command_line = "infraplan-gui: File › Export report";
  in.generator =
      std::string("infraplan-gui ") + build_info::kVersion + " (commit " + build_info::kGitCommit + ")";
  std::string text;
  try {
    text = report::write_report(
        in, path.endsWith(".md", Qt::CaseInsensitive) ? report::Format::Markdown : report::Format::Html);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return save_bytes_atomic(path, QByteArray::fromStdString(text), error);
}

void MainWindow::onExportReport() {
  const QString path = QFileDialog::getSaveFileName(this, "Export report", "report.html",
                                                    "HTML report (*.html);;Markdown summary (*.md)");
  if (path.isEmpty()) return;
  QString error;
  if (!exportReport(path, &error))
    QMessageBox::warning(this, "Export failed", error);
  else
    showStatus("Wrote " + path);
}

void MainWindow::onExportJson() {
  const QString path =
      QFileDialog::getSaveFileName(this, "Export results as JSON", "results.json", "JSON (*.json)");
  if (path.isEmpty()) return;
  QString error;
  if (!exportResultsJson(path, &error))
    QMessageBox::warning(this, "Export failed", error);
  else
    showStatus("Wrote " + path);
}

void MainWindow::onExportPng() {
  const QString path =
      QFileDialog::getSaveFileName(this, "Export chart as PNG", "chart.png", "PNG images (*.png)");
  if (path.isEmpty()) return;
  QString error;
  if (!exportChartPng(path, &error))
    QMessageBox::warning(this, "Export failed", error);
  else
    showStatus("Wrote " + path);
}

}  // namespace infraplan::gui
