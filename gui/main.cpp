// infraplan-gui: the desktop planner. With --screenshot it renders one view to a PNG and exits
// (works with QT_QPA_PLATFORM=offscreen; used for the screenshots in docs/gui.md).
#include <QApplication>
#include <QCommandLineParser>
#include <QTabWidget>
#include <QTimer>
#include <cstdio>

#include "gui/export.hpp"
#include "gui/input_panel.hpp"
#include "gui/main_window.hpp"

using infraplan::gui::MainWindow;

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("infraplan-gui");
  QCommandLineParser p;
  p.setApplicationDescription("infraplan desktop planner: memory, training and serving for LLM clusters");
  p.addHelpOption();
  p.addOption({"scenario", "Open this scenario file.", "file"});
  p.addOption({"run", "Run the simulation after opening."});
  p.addOption({"plan", "Run the planner after opening."});
  p.addOption({"tab", "Show this tab: memory, training, serving or plan.", "name", "memory"});
  p.addOption({"screenshot", "Render the window to this PNG and exit.", "file"});
  p.addOption({"size", "Window size for --screenshot, WxH.", "size", "1360x860"});
  p.process(app);

  MainWindow w;
  if (p.isSet("scenario") && !w.openScenario(p.value("scenario"))) {
    std::fprintf(stderr, "infraplan-gui: cannot open %s\n", qPrintable(p.value("scenario")));
    if (p.isSet("screenshot")) return 2;
  }
  const QString tab = p.value("tab").toLower();
  const int index = tab == "training"  ? MainWindow::TrainingTabIndex
                    : tab == "serving" ? MainWindow::ServingTabIndex
                    : tab == "plan"    ? MainWindow::PlanTabIndex
                                       : MainWindow::MemoryTabIndex;
  using infraplan::gui::Action;
  if (!p.isSet("screenshot")) {
    if (p.isSet("run")) w.evaluate(Action::Simulate);
    if (p.isSet("plan")) w.evaluate(Action::Plan);
    w.tabs()->setCurrentIndex(index);
    w.show();
    return app.exec();
  }

  const QStringList size = p.value("size").split('x');
  w.resize(size.value(0).toInt() > 0 ? size.value(0).toInt() : 1360,
           size.value(1).toInt() > 0 ? size.value(1).toInt() : 860);
  w.show();
  if (!w.waitUntilIdle(600000)) return 1;
  for (auto [flag, action] : {std::pair{"run", Action::Simulate}, std::pair{"plan", Action::Plan}}) {
    if (!p.isSet(flag)) continue;
    w.evaluate(action);
    if (!w.waitUntilIdle(600000)) return 1;
  }
  w.tabs()->setCurrentIndex(index);
  QApplication::processEvents();
  const QString problem = w.inputPanel()->errorText();
  if (!problem.isEmpty()) std::fprintf(stderr, "infraplan-gui: %s\n", qPrintable(problem));
  QString error;
  if (!infraplan::gui::save_widget_png(p.value("screenshot"), &w, &error)) {
    std::fprintf(stderr, "infraplan-gui: %s\n", qPrintable(error));
    return 1;
  }
  return 0;
}
