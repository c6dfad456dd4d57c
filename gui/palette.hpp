#pragma once
// Colours shared by the planner's charts, so a category keeps its colour from chart to chart.
#include <QColor>
#include <QString>

namespace infraplan::gui {

/// The i-th colour of a qualitative palette (cycles after 12).
QColor series_color(int i);

/// The colour of a training time category: "compute", "recompute", "optimizer", "host" (waiting
/// for the host to issue work), "bubble", or a communication kind ("tp", "cp", "ep", "pp", "dp").
QColor category_color(const QString& category);

}  // namespace infraplan::gui
