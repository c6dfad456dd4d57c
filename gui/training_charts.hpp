#pragma once
// The Training tab's charts, drawn from a simulated iteration (simulator/training_sim.hpp):
//  - the time breakdown per pipeline stage (compute, recompute, optimizer, exposed
//    communication by kind, bubble), which adds up to the iteration time;
//  - a Gantt-like timeline: per stage one row for the compute stream and one for the
//    communication streams, spans coloured by op category, from the executed work graph.
#include <QString>
#include <QStringList>

#include "simulator/training_sim.hpp"

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace infraplan::gui {

/// Horizontal stacked bars, one per pipeline stage, segments in milliseconds.
QChart* build_breakdown_chart(const sim::train::TrainingResult& r);

/// Horizontal stacked bars of `bars` (first on top, labelled by `labels`), segments in
/// milliseconds: compute, recompute, optimizer, exposed communication by kind, bubble.
QChart* build_breakdown_bars(const std::vector<sim::train::TimeBreakdown>& bars, const QStringList& labels,
                             const QString& title, const QString& axis_title);

/// One span of the timeline (merged run of ops of one category on one row).
struct TimelineSpan {
  int row = 0;          ///< 0 = stage 0 compute, 1 = stage 0 communication, 2 = stage 1 compute, …
  QString category;     ///< busiest op category ("compute", "recompute", "optimizer", "tp", "cp", "ep", "pp", "dp")
  double start_s = 0, end_s = 0;  ///< seconds from the start of the iteration
};

/// The spans of the first lane of every stage at the resolution of `bins` equal slices of the
/// iteration: a slice shows the category its row spends most time on, when the row is busy for
/// at least half of the slice (else it is idle); equal neighbouring slices form one span.
/// Thousands of ops per slice stay readable and the chart's size stays bounded. Empty when the
/// result carries no graph (keep_graph off).
std::vector<TimelineSpan> timeline_spans(const sim::train::TrainingResult& r, int bins);

/// The timeline chart (milliseconds on x, one labelled row per stage and stream kind).
QChart* build_timeline_chart(const sim::train::TrainingResult& r);

}  // namespace infraplan::gui
