#pragma once
// The report as a document: sections of paragraphs, key figures, tables, charts and code blocks,
// independent of the output format. render_html and render_markdown (report/render.hpp) write it.
//
// A number taken from a result JSON travels as a Value: the text people read ("456.7 ms") and,
// when it is a JSON number, where it came from (result index and JSON pointer) and its exact
// value. The HTML writer puts both on the element (data-result, data-key, data-value), so a test
// can check that every number shown equals the one in the CLI's --json.
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace infraplan::report {

/// A displayed value, optionally traced to a JSON number.
struct Value {
  std::string text;           ///< what people read, units included
  std::string key;            ///< JSON pointer into the result ("/metrics/ttft_ms/p50"); empty = derived
  int result = 0;             ///< index of the result the key refers to
  std::optional<double> raw;  ///< the JSON number at `key` (set together with key)
  bool numeric = true;        ///< right-aligned in tables
};

/// A value that is plain text (left-aligned, untraced).
inline Value text(std::string s) {
  Value v;
  v.text = std::move(s);
  v.numeric = false;
  return v;
}

struct Paragraph {
  std::string text;   ///< plain text (escaped by the writers)
  bool note = false;  ///< small print (caveats, how a number was computed)
};

struct BulletList {
  std::vector<std::string> items;
};

/// Key figures shown as tiles: label over value.
struct KeyFigures {
  struct Item {
    std::string label;
    Value value;
    std::string detail;  ///< small line under the value (may be empty)
  };
  std::vector<Item> items;
};

struct Table {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<Value>> rows;
  int highlight_row = -1;  ///< row to emphasise (the recommendation), −1 = none
};

/// An inline SVG chart. `svg` is complete <svg> markup from report/svg_chart.hpp.
struct Figure {
  std::string title;  ///< the chart's heading
  std::string svg;
  std::string caption;  ///< what the chart shows and how it was binned
};

/// Preformatted text (the scenario as given).
struct Code {
  std::string language;  ///< "json", "" …
  std::string text;
};

using Block = std::variant<Paragraph, BulletList, KeyFigures, Table, Figure, Code>;

struct Section {
  std::string id;     ///< HTML id and anchor ("memory", "training", ...)
  std::string title;  ///< heading
  std::vector<Block> blocks;
};

struct Document {
  std::string title;     ///< page title and top heading
  std::string subtitle;  ///< one line under the title (what was asked)
  std::vector<Section> sections;
};

}  // namespace infraplan::report
