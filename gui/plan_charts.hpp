#pragma once
// The Plan tab's charts: for a training plan, the iteration-time breakdown of every ranked
// layout (why the winner wins); for a serving plan, the Pareto front of output throughput per
// GPU against tokens per second per user, over every simulated load point of every candidate.
#include <QtGlobal>

#include "planner/serve_planner.hpp"
#include "planner/train_planner.hpp"

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace infraplan::gui {

/// One stacked bar per candidate (best on top), segments in milliseconds.
QChart* build_train_plan_chart(const plan::TrainPlan& p);

/// Scatter of every candidate's load points (one series per candidate; circles aggregated,
/// squares disaggregated) and the Pareto front as a line: x = tokens/s per user, y = output
/// tokens/s per GPU.
QChart* build_pareto_chart(const plan::ServePlan& p);

}  // namespace infraplan::gui
