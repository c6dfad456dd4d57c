#pragma once
// The Training tab's charts, drawn from a simulated iteration (simulator/training_sim.hpp):
//  - the time breakdown per pipeline stage (compute, recompute, optimizer, exposed
//    communication by kind, bubble), which adds up to the iteration time;
//  - a Gantt-like timeline: per stage one row for the compute stream and one for the
//    communication streams, coloured by op category, from the executed work graph; in each time
//    slice a colour's height is the share of the slice the stream spends on that category.
#include <QImage>
#include <QString>
#include <QStringList>
#include <map>
#include <vector>

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

/// One row of the timeline: a stream kind of the first GPU of a pipeline stage, cut into equal
/// time slices, with the share of each slice spent on each op category.
struct TimelineRow {
  int stage = 0;
  bool comm = false;   ///< false: the compute stream; true: the communication streams together
  double slice_s = 0;  ///< width of one slice, seconds
  /// Category ("compute", "recompute", "optimizer", "tp", "cp", "ep", "pp", "dp") →
  /// share of each slice, 0..1 (concurrent communication streams may sum past 1).
  std::map<QString, std::vector<double>> share;
};

/// The rows (stage 0 compute, stage 0 comm, stage 1 compute, …) of `r` at `slices` slices per
/// iteration. Millions of ops become a picture of bounded size that keeps every category's time.
/// Empty when the result carries no graph (keep_graph off).
std::vector<TimelineRow> timeline_rows(const sim::train::TrainingResult& r, int slices);

/// Slices per iteration of the Training tab's timeline (about one per pixel of a wide chart).
constexpr int kTimelineSlices = 800;

/// The rows as a picture, one pixel column per slice and `row_px` pixels per row: in each
/// column a category's colour fills its share of the row's band. Safe on any thread.
QImage render_timeline(const std::vector<TimelineRow>& rows, int row_px = 24);

/// The timeline chart (milliseconds on x, one labelled row per stage and stream kind): Qt Charts
/// axes and legend over `image` (render_timeline(rows), rendered here when null) stretched over
/// the plot area. One picture instead of a series per row and category keeps the chart cheap to
/// lay out for any number of stages. Rows and picture may be made on another thread.
QChart* build_timeline_chart(const sim::train::TrainingResult& r, const std::vector<TimelineRow>& rows,
                             QImage image = {});

}  // namespace infraplan::gui
