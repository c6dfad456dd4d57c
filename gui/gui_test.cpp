// Qt Test suite of the desktop planner (run offscreen: QT_QPA_PLATFORM=offscreen).
#include <QAbstractBarSeries>
#include <QAreaSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QElapsedTimer>
#include <QFile>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/evaluation.hpp"
#include "gui/input_panel.hpp"
#include "gui/inputs.hpp"
#include "gui/ledger_chart.hpp"
#include "gui/main_window.hpp"
#include "gui/memory_tab.hpp"
#include "gui/plan_tab.hpp"
#include "gui/serving_charts.hpp"
#include "gui/serving_tab.hpp"
#include "gui/training_charts.hpp"
#include "gui/training_tab.hpp"
#include "strategies/memory_ledger.hpp"
#include "strategies/scenario.hpp"

using namespace infraplan;
using namespace infraplan::gui;

namespace {

const QString kOneA100 = QStringLiteral(INFRAPLAN_SOURCE_DIR "/scenarios/memory_llama2_7b_one_a100.json");

// Sum of every bar segment of every stacked bar series in `chart`, in the chart's unit.
double stacked_total(QChart* chart) {
  double sum = 0;
  for (auto* s : chart->series())
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(s))
      for (auto* set : bars->barSets())
        for (int i = 0; i < set->count(); ++i) sum += set->at(i);
  return sum;
}

}  // namespace

class GuiTest : public QObject {
  Q_OBJECT

 private slots:
  void ledgerChartMatchesLedger() {
    const auto sc = strat::load_scenario(kOneA100.toStdString());
    const auto ledger = strat::training_memory_peak(sc.model, sc.cluster, *sc.training);
    const LedgerChart c = build_ledger_chart(ledger);
    std::unique_ptr<QChart> owner(c.chart);
    const double GiB = 1073741824.0;
    QVERIFY(std::abs(stacked_total(c.chart) * GiB - ledger.total_bytes()) < 1e-6 * ledger.total_bytes());
    QVERIFY(std::abs(c.stack_total_GiB * GiB - ledger.total_bytes()) < 1e-6 * ledger.total_bytes());
    QCOMPARE(c.capacity_GiB * GiB, ledger.capacity_bytes);
    QVERIFY2(c.verdict.startsWith("does not fit by"), qPrintable(c.verdict));
    QCOMPARE(c.verdict, QString::fromStdString(ledger.verdict()));
  }

  void windowShowsLedgerOfScenario() {
    MainWindow w;
    QVERIFY(w.waitUntilIdle(5000));
    QVERIFY(w.openScenario(kOneA100));
    QVERIFY(w.waitUntilIdle(5000));
    const auto sc = strat::load_scenario(kOneA100.toStdString());
    const auto ledger = strat::training_memory_peak(sc.model, sc.cluster, *sc.training);
    QChart* chart = w.memoryTab()->chartView()->chart();
    QVERIFY(std::abs(stacked_total(chart) * 1073741824.0 - ledger.total_bytes()) <
            1e-6 * ledger.total_bytes());
    QVERIFY2(w.memoryTab()->headline().contains("does not fit by"), qPrintable(w.memoryTab()->headline()));
    QVERIFY(w.inputPanel()->errorText().isEmpty());
  }

  void invalidInputShowsFieldAndKeepsResults() {
    MainWindow w;
    QVERIFY(w.waitUntilIdle(5000));  // llama2-7b on one DGX A100 (8 GPUs), tp=1
    const auto before = w.memoryEvaluation();
    QVERIFY(before);
    QCOMPARE(before->scenario.model.name, std::string("llama2-7b"));
    QCOMPARE(before->scenario.model.heads, std::int64_t(32));
    const QString headline = w.memoryTab()->headline();
    const double total = stacked_total(w.memoryTab()->chartView()->chart());

    auto* tp = qobject_cast<QSpinBox*>(w.inputPanel()->fieldWidget("training.tp"));
    QVERIFY(tp);
    tp->setValue(3);  // 32 heads
    QVERIFY(w.waitUntilIdle(5000));
    const QString err = w.inputPanel()->errorText();
    QVERIFY2(err.contains("training.tp"), qPrintable(err));
    QVERIFY2(err.contains("3"), qPrintable(err));
    QCOMPARE(w.inputPanel()->invalidField(), QString("training.tp"));
    QCOMPARE(w.memoryEvaluation(), before);  // previous results intact
    QCOMPARE(w.memoryTab()->headline(), headline);
    QCOMPARE(stacked_total(w.memoryTab()->chartView()->chart()), total);

    tp->setValue(2);
    QVERIFY(w.waitUntilIdle(5000));
    QVERIFY(w.inputPanel()->errorText().isEmpty());
    QVERIFY(w.inputPanel()->invalidField().isEmpty());
    QVERIFY(w.memoryEvaluation() != before);
    QCOMPARE(w.memoryEvaluation()->scenario.training->tp, 2);
  }

  void exportJsonEqualsLedger() {
    MainWindow w;
    QVERIFY(w.openScenario(kOneA100));
    QVERIFY(w.waitUntilIdle(5000));
    QTemporaryDir dir;
    const QString path = dir.filePath("memory.json");
    QString error;
    QVERIFY2(w.exportResultsJson(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const Json j = Json::parse(f.readAll().toStdString());  // throws on invalid JSON
    const auto ev = w.memoryEvaluation();
    const Json ledger = ev->ledger.to_json();
    for (const auto& [k, v] : ledger.items())
      QCOMPARE(QString::fromStdString(j.at(k).dump()), QString::fromStdString(v.dump()));
    QCOMPARE(j.at("scenario").get<std::string>(), std::string("llama2-7b-one-a100"));
    QCOMPARE(j.at("training").dump(), ev->scenario.training->to_json().dump());

    // A write that cannot happen reports the file and leaves nothing behind.
    const QString bad = dir.filePath("missing/sub/memory.json");
    QVERIFY(!w.exportResultsJson(bad, &error));
    QVERIFY2(error.contains("missing/sub/memory.json"), qPrintable(error));
    QVERIFY(!QFile::exists(bad));
    // A PNG of the chart.
    QVERIFY2(w.exportChartPng(dir.filePath("memory.png"), &error), qPrintable(error));
    QImage img(dir.filePath("memory.png"));
    QVERIFY(!img.isNull());
  }

  void exportReportWritesTheHtmlPage() {
    MainWindow w;
    QVERIFY(w.openScenario(kOneA100));
    QVERIFY(w.waitUntilIdle(5000));
    QTemporaryDir dir;
    QString error;
    const QString path = dir.filePath("memory.html");
    QVERIFY2(w.exportReport(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(f.readAll());
    QVERIFY(html.startsWith("<!DOCTYPE html>"));
    QVERIFY(html.contains("<section id=\"memory\">"));
    QVERIFY(html.contains("<svg"));
    QVERIFY(!html.contains("<script"));
    // The page shows the ledger's total, traced to the exported JSON's key.
    const double total = w.memoryEvaluation()->ledger.total_bytes();
    const QString key = "data-key=\"/total_bytes\" data-value=\"";
    const int at = html.indexOf(key);
    QVERIFY(at > 0);
    const int from = at + key.size();
    QCOMPARE(html.mid(from, html.indexOf('"', from) - from).toDouble(), total);
    QVERIFY2(w.exportReport(dir.filePath("memory.md"), &error), qPrintable(error));
    QFile md(dir.filePath("memory.md"));
    QVERIFY(md.open(QIODevice::ReadOnly));
    QVERIFY(md.readAll().startsWith("# Training memory"));
    // No results on the tab, or no directory: an error, no file.
    w.tabs()->setCurrentIndex(MainWindow::ServingTabIndex);
    QVERIFY(!w.exportReport(dir.filePath("serving.html"), &error));
    QVERIFY(error.contains("no results"));
    QVERIFY(!QFile::exists(dir.filePath("serving.html")));
    w.tabs()->setCurrentIndex(MainWindow::MemoryTabIndex);
    QVERIFY(!w.exportReport(dir.filePath("missing/sub/r.html"), &error));
    QVERIFY(!QFile::exists(dir.filePath("missing/sub/r.html")));
  }

  void scenarioRoundTripsThroughInputs() {
    const Json raw = read_json_file(kOneA100.toStdString());
    const Inputs in = inputs_from_scenario(raw);
    QCOMPARE(in.cluster, std::string("dgx-a100-80gb"));
    QCOMPARE(in.gpus_per_node, 1);
    QCOMPARE(in.training.recompute, std::string("full"));
    const auto a = strat::scenario_from_json(raw, "a");
    const auto b = strat::scenario_from_json(to_scenario(in), "b");
    QCOMPARE(b.training->to_json().dump(), a.training->to_json().dump());
    QCOMPARE(b.cluster.to_json().dump(), a.cluster.to_json().dump());
  }

  void windowSimulatesTrainingAndSwitchesTabs() {
    MainWindow w;
    w.show();
    QVERIFY(w.openScenario(INFRAPLAN_SOURCE_DIR "/scenarios/train_gpt2_124m_1xh200.json"));
    w.evaluate(Action::Simulate);
    QVERIFY(w.waitUntilIdle(8000));
    QVERIFY2(w.inputPanel()->errorText().isEmpty(), qPrintable(w.inputPanel()->errorText()));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::TrainingTabIndex));
    const auto ev = w.trainingEvaluation();
    QVERIFY(ev && ev->training);
    QVERIFY(ev->training->iteration_time_s > 0);
    QVERIFY(w.trainingTab()->headline().contains("MFU"));
    // The breakdown adds up to the iteration time; the timeline has spans.
    QChart* breakdown = w.trainingTab()->breakdownView()->chart();
    const double stage0_ms =
        stacked_total(breakdown) / double(std::max<std::size_t>(1, ev->training->stage_breakdown.size()));
    QVERIFY(stage0_ms > 0);
    const auto rows = timeline_rows(*ev->training, 100);
    QCOMPARE(int(rows.size()), 2);  // one stage: compute and communication rows
    QVERIFY(!rows[0].comm && rows[1].comm);
    // The compute row's shares add up to the busy time of the compute stream.
    double busy = 0;
    for (const auto& [cat, v] : rows[0].share)
      for (double x : v) {
        QVERIFY(x >= 0 && x <= 1 + 1e-9);
        busy += x * rows[0].slice_s;
      }
    const auto& b = ev->training->breakdown;
    const double expect = b.compute + b.recompute + b.optimizer;
    QVERIFY2(std::abs(busy - expect) < 1e-6 * ev->training->iteration_time_s + 1e-9,
             qPrintable(QString("compute row busy %1 s, breakdown %2 s").arg(busy).arg(expect)));
    QVERIFY(!w.trainingTab()->timelineView()->chart()->series().isEmpty());  // legend keys
    const QImage picture = render_timeline(rows, 10);
    QCOMPARE(picture.size(), QSize(100, 20));
    QCOMPARE(w.currentResultsJson().at("iteration_time_s").get<double>(), ev->training->iteration_time_s);

    for (int i : {int(MainWindow::MemoryTabIndex), int(MainWindow::ServingTabIndex),
                  int(MainWindow::TrainingTabIndex)}) {
      w.tabs()->setCurrentIndex(i);
      QCOMPARE(w.tabs()->currentIndex(), i);
      QVERIFY(w.tabs()->currentWidget()->isVisible());
    }
    w.tabs()->setCurrentIndex(MainWindow::ServingTabIndex);
    QVERIFY(w.currentResultsJson().is_null());  // nothing simulated there yet
  }

  void planTabRanksLayoutsAndAppliesOne() {
    MainWindow w;
    QVERIFY(w.openScenario(INFRAPLAN_SOURCE_DIR "/scenarios/train_gpt2_124m_1xh200.json"));
    w.evaluate(Action::Plan);
    QVERIFY(w.waitUntilIdle(8000));
    QVERIFY2(w.inputPanel()->errorText().isEmpty(), qPrintable(w.inputPanel()->errorText()));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::PlanTabIndex));
    const auto ev = w.planEvaluation();
    QVERIFY(ev && ev->train_plan);
    const auto& cands = ev->train_plan->candidates;
    QVERIFY(!cands.empty());
    QCOMPARE(w.planTab()->table()->rowCount(), int(cands.size()));
    QCOMPARE(w.planTab()->table()->item(0, 1)->text(), QString::fromStdString(cands[0].label()));
    QCOMPARE(w.currentResultsJson().dump(), ev->plan_json().dump());
    QVERIFY(w.currentResultsJson().at("candidates").size() == cands.size());

    const auto best = cands.front().cfg;
    QVERIFY(w.applyPlanCandidate(0));
    QVERIFY(w.waitUntilIdle(5000));
    const auto applied = w.memoryEvaluation()->scenario.training;
    QVERIFY(applied);
    QCOMPARE(applied->tp, best.tp);
    QCOMPARE(applied->micro_batch, best.micro_batch);
    QCOMPARE(int(applied->recompute), int(best.recompute));
    QVERIFY(!w.applyPlanCandidate(int(cands.size())));
  }

  void windowSimulatesServingOffTheGuiThread() {
    MainWindow w;
    QVERIFY(w.waitUntilIdle(5000));
    Inputs in =
        inputs_from_scenario(read_json_file(INFRAPLAN_SOURCE_DIR "/scenarios/serve_goodput_slo.json"));
    in.serving.requests = 60;
    in.serving.rate_per_s = 10;
    w.inputPanel()->setInputs(in);
    QElapsedTimer t;
    t.start();
    w.evaluate(Action::Simulate);
    QVERIFY(t.elapsed() < 100);  // the simulation runs on a worker thread
    QVERIFY(w.busy());
    QVERIFY(w.waitUntilIdle(8000));
    QVERIFY2(w.inputPanel()->errorText().isEmpty(), qPrintable(w.inputPanel()->errorText()));
    QCOMPARE(w.tabs()->currentIndex(), int(MainWindow::ServingTabIndex));
    const auto ev = w.servingEvaluation();
    QVERIFY(ev && ev->serving);
    QCOMPARE(int(ev->serving->requests.size()), 60);
    QVERIFY(w.servingTab()->headline().contains("goodput"));
    // dgx-h100's profile is derived from the H200's: the run says so, in the headline and the JSON.
    QVERIFY(w.servingTab()->headline().contains("the profile is derived from the measured"));
    QVERIFY(w.servingTab()->cdfView()->chart()->series().size() >= 2);
    const Json j = w.currentResultsJson();
    QVERIFY(j.contains("warnings"));
    // The window's metrics are the simulation's, plus the ranges of the measured spread.
    Json metrics = j.at("metrics");
    for (const char* k : {"ttft_range_ms", "tpot_range_ms", "e2e_range_ms", "itl_range_ms",
                          "ttft_interval_ms", "tpot_interval_ms"})
      metrics.erase(k);
    QCOMPARE(metrics.dump(), ev->serving->metrics.to_json().dump());
    QCOMPARE(j.at("scenario").get<std::string>(), std::string("serve_goodput_slo"));
  }

  void huggingFaceConfigAsModel() {
    QTemporaryDir dir;
    const QString path = dir.filePath("config.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192})");
    f.close();
    MainWindow w;
    QVERIFY(w.waitUntilIdle(5000));
    w.openModelConfig(path);
    QVERIFY(w.waitUntilIdle(5000));
    QVERIFY2(w.inputPanel()->errorText().isEmpty(), qPrintable(w.inputPanel()->errorText()));
    const auto& m = w.memoryEvaluation()->scenario.model;
    QCOMPARE(m.hidden, std::int64_t(4096));
    QCOMPARE(m.kv_heads, std::int64_t(8));
    QCOMPARE(m.vocab, std::int64_t(128256));
  }

  void nonPresetClusterIsKeptAsWritten() {
    const Json raw = {{"name", "gpu-name-cluster"},
                      {"model", "llama2-7b"},
                      {"cluster", "h100-sxm5-80gb"},
                      {"training", {{"tp", 8}, {"seq_len", 2048}}}};
    const Inputs in = inputs_from_scenario(raw);
    QVERIFY(in.cluster_from_base);
    QCOMPARE(in.gpus_per_node, 8);
    const Json out = to_scenario(in);
    QCOMPARE(out.at("cluster").dump(), raw.at("cluster").dump());
    const auto a = strat::scenario_from_json(raw, "a");
    const auto b = strat::scenario_from_json(out, "b");
    QCOMPARE(b.cluster.to_json().dump(), a.cluster.to_json().dump());
    QCOMPARE(b.training->to_json().dump(), a.training->to_json().dump());
  }

  void cdfPointsAreMonotone() {
    const auto pts = cdf_points({5, 1, 0, 3, 3, 2, -1});
    QCOMPARE(int(pts.size()), 5);
    QCOMPARE(pts.front().first, 1.0);
    QCOMPARE(pts.back().first, 5.0);
    QCOMPARE(pts.back().second, 1.0);
    for (std::size_t i = 1; i < pts.size(); ++i) QVERIFY(pts[i].second >= pts[i - 1].second);
  }
};

QTEST_MAIN(GuiTest)
#include "gui_test.moc"
