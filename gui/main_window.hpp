#pragma once
// MainWindow: the planner. Inputs on the left; Memory, Training and Serving tabs on the right;
// File menu to open scenarios and model configs and to export results (JSON), charts (PNG) and
// reports (HTML or Markdown, report/).
//
// Every computation runs on a worker thread (QtConcurrent) while a busy bar shows in the status
// bar; the event loop never waits for it. Edits re-evaluate the memory ledger after a short
// pause; "Run simulation" also runs the training or serving simulation. One evaluation runs at a
// time and the newest request waits for it. "Plan" runs the planner's search (Plan tab). A failed evaluation
// shows the library's message under the form and leaves the previous results on screen.
#include <QFutureWatcher>
#include <QImage>
#include <QMainWindow>
#include <memory>
#include <optional>

#include "gui/evaluation.hpp"
#include "gui/training_charts.hpp"

QT_BEGIN_NAMESPACE
class QChartView;
class QLabel;
class QProgressBar;
class QTabWidget;
class QTimer;
QT_END_NAMESPACE

namespace infraplan::gui {

class InputPanel;
class MemoryTab;
class TrainingTab;
class ServingTab;
class PlanTab;

/// What a worker returns: an evaluation, or the message of the error that stopped it.
struct Outcome {
  std::shared_ptr<const Evaluation> evaluation;
  std::vector<TimelineRow> timeline;  ///< rows of the training timeline, when simulated
  QImage timeline_image;              ///< render_timeline(timeline)
  QString error;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  enum Tab { MemoryTabIndex = 0, TrainingTabIndex = 1, ServingTabIndex = 2, PlanTabIndex = 3 };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Loads a scenario file into the form and evaluates it; false (error shown) when it cannot
  /// be read or parsed.
  bool openScenario(const QString& path);
  /// Sets the model to a Hugging Face config.json (or infraplan model file) path.
  void openModelConfig(const QString& path);
  /// Starts an evaluation of the current form: the memory ledger, plus the simulation or the plan.
  void evaluate(Action action);
  /// True while an evaluation runs or waits.
  bool busy() const;
  /// Waits (running the event loop) until no evaluation runs or waits; false on timeout.
  bool waitUntilIdle(int timeout_ms);

  /// Copies candidate `index` of the shown plan into the form (training layouts and aggregated
  /// serving deployments) and re-evaluates; false when there is no such candidate.
  bool applyPlanCandidate(int index);

  /// The JSON the current tab's results export to (null when the tab has no results):
  /// Memory → `infraplan memory … --json`, Training → `simulate train --json`,
  /// Serving → `simulate serve --json`, Plan → `plan train|serve --json`.
  Json currentResultsJson() const;
  /// Exports currentResultsJson() / the current tab's main chart; false with `error` set on failure.
  bool exportResultsJson(const QString& path, QString* error);
  /// File › Export report: the current tab's results as one self-contained HTML page (or
  /// Markdown when `path` ends in .md), written by the report library as `infraplan report`
  /// writes it; false with `error` set when there are no results or the file cannot be written.
  bool exportReport(const QString& path, QString* error);
  bool exportChartPng(const QString& path, QString* error);
  /// The current tab's main chart view.
  QChartView* currentChartView() const;

  InputPanel* inputPanel() const { return inputs_; }
  QTabWidget* tabs() const { return tabs_; }
  MemoryTab* memoryTab() const { return memory_; }
  TrainingTab* trainingTab() const { return training_; }
  ServingTab* servingTab() const { return serving_; }
  PlanTab* planTab() const { return plan_; }
  /// The evaluation whose memory ledger is shown (null before the first success).
  std::shared_ptr<const Evaluation> memoryEvaluation() const { return memory_ev_; }
  std::shared_ptr<const Evaluation> trainingEvaluation() const { return training_ev_; }
  std::shared_ptr<const Evaluation> servingEvaluation() const { return serving_ev_; }
  std::shared_ptr<const Evaluation> planEvaluation() const { return plan_ev_; }

 signals:
  /// An evaluation ended: `ok` false when it failed (the message is under the form).
  void evaluationFinished(bool ok);

 private:
  void buildMenus();
  void start(const EvaluationRequest& req);
  void onFinished();
  void showStatus(const QString& text);
  void onOpenScenario();
  void onOpenModelConfig();
  void onExportJson();
  void onExportPng();
  void onExportReport();

  InputPanel* inputs_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  MemoryTab* memory_ = nullptr;
  TrainingTab* training_ = nullptr;
  ServingTab* serving_ = nullptr;
  PlanTab* plan_ = nullptr;
  QProgressBar* busy_bar_ = nullptr;
  QLabel* status_ = nullptr;
  QTimer* debounce_ = nullptr;
  QFutureWatcher<Outcome>* watcher_ = nullptr;
  std::optional<EvaluationRequest> running_, pending_;
  std::shared_ptr<const Evaluation> memory_ev_, training_ev_, serving_ev_, plan_ev_;
};

}  // namespace infraplan::gui
