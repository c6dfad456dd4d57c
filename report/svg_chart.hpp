#pragma once
// The report's chart types, each a function from plain data to one <svg> element: line charts
// (CDFs, time series, with reference lines and shaded bands), horizontal stacked bars (memory per
// stage against capacity, time per stage), grouped columns, a timeline of coloured spans, and a
// scatter plot with a highlighted front. Every chart has a title, axis titles with units and a
// legend; colours come from report/palette.hpp. No scripts, no external references.
#include <string>
#include <vector>

#include "report/svg_canvas.hpp"

namespace infraplan::report::svg {

/// A reference line across the plot: vertical (at an x value) or horizontal (at a y value).
struct RefLine {
  double value = 0;
  std::string label;
  bool vertical = true;
  std::string color;  ///< default: palette reference colour
};

struct Series {
  std::string name;
  std::string color;
  std::vector<double> x, y;
  std::vector<double> low, high;  ///< optional shaded band (same length as x)
  bool dashed = false;
  bool step = false;  ///< draw as a step function (value holds until the next x)
};

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<RefLine> refs;
  double height = 340;
};
std::string line_chart(const LineChart& c);

/// Horizontal stacked bars: bars[i] is split into categories by values[i][k].
struct StackedBars {
  std::string title;
  Axis value_axis;                          ///< the horizontal axis
  std::vector<std::string> bar_labels;      ///< one per bar, left of it
  std::vector<std::string> categories;      ///< legend order
  std::vector<std::string> colors;          ///< one per category
  std::vector<std::vector<double>> values;  ///< [bar][category]
  std::vector<std::string> bar_notes;       ///< text right of each bar (e.g. the total); optional
  std::vector<RefLine> refs;                ///< vertical lines (capacity)
};
std::string stacked_bars(const StackedBars& c);

/// Vertical columns: one group per label, one column per series.
struct GroupedColumns {
  std::string title;
  Axis value_axis;
  std::vector<std::string> labels;        ///< x categories
  std::vector<std::string> series_names;  ///< legend
  std::vector<std::string> colors;
  std::vector<std::vector<double>> values;  ///< [series][label]
  std::vector<RefLine> refs;                ///< horizontal lines
};
std::string grouped_columns(const GroupedColumns& c);

/// Spans of categories along a time axis, one row per lane.
struct Timeline {
  std::string title;
  Axis time_axis;
  std::vector<std::string> rows;        ///< lane labels, top to bottom
  std::vector<std::string> categories;  ///< legend order
  std::vector<std::string> colors;
  struct Span {
    int row = 0, category = 0;
    double start = 0, end = 0;
  };
  std::vector<Span> spans;
  /// Shaded ranges across all rows (e.g. where the iteration may end), with one legend label.
  std::vector<std::pair<double, double>> bands;
  std::string band_label;
};
std::string timeline(const Timeline& c);

struct ScatterGroup {
  std::string name, color;
  std::vector<double> x, y;
  std::vector<std::string> labels;  ///< optional per-point text
  bool connect = false;             ///< join the points in x order (a front)
};
struct Scatter {
  std::string title;
  Axis x, y;
  std::vector<ScatterGroup> groups;
  double height = 380;
};
std::string scatter(const Scatter& c);

}  // namespace infraplan::report::svg
