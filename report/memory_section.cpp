// Memory section: where the bytes of one GPU go, per pipeline stage, against its capacity.
#include <algorithm>

#include "report/format.hpp"
#include "report/palette.hpp"
#include "report/sections.hpp"
#include "report/svg_chart.hpp"

namespace infraplan::report {

namespace {

constexpr double kGiB = 1073741824.0;

}  // namespace

Section memory_section(const ResultView& r, const std::string& ledger, const std::string& stages) {
  Section s{"memory", "Memory per GPU", {}};
  const std::string scope = r.string(ledger + "/scope");
  const bool fits = r.at(ledger + "/fits").get<bool>();
  const double total = r.number(ledger + "/total_bytes"), cap = r.number(ledger + "/capacity_bytes");
  KeyFigures k;
  k.items.push_back({"verdict", text(fits ? "fits" : "does not fit"), r.string(ledger + "/verdict")});
  k.items.push_back({"peak per GPU", r.bytes(ledger + "/total_bytes"), scope});
  k.items.push_back({"GPU capacity", r.bytes(ledger + "/capacity_bytes"), ""});
  k.items.push_back({fits ? "headroom" : "over by", derived(std::abs(cap - total), fmt_bytes),
                     cap > 0 ? fmt_percent(std::abs(cap - total) / cap, 1) + " of capacity" : ""});
  s.blocks.push_back(k);

  // The bars: every stage when the result lists them, else the one ledger.
  std::vector<std::string> ptrs;
  if (!stages.empty() && r.has(stages) && r.at(stages).is_array() && !r.at(stages).empty()) {
    for (std::size_t i = 0; i < r.at(stages).size(); ++i) ptrs.push_back(stages + "/" + std::to_string(i));
  } else {
    ptrs.push_back(ledger);
  }
  svg::StackedBars ch;
  ch.title = ptrs.size() > 1 ? "Memory per GPU by pipeline stage" : "Memory per GPU";
  ch.value_axis.title = "memory per GPU (GiB)";
  for (const auto& p : ptrs)
    for (const auto& l : r.at(p + "/lines")) {
      const std::string n = l.at("name").get<std::string>();
      if (std::find(ch.categories.begin(), ch.categories.end(), n) == ch.categories.end())
        ch.categories.push_back(n);
    }
  for (std::size_t k2 = 0; k2 < ch.categories.size(); ++k2) ch.colors.push_back(series_color(int(k2)));
  for (std::size_t i = 0; i < ptrs.size(); ++i) {
    std::vector<double> v(ch.categories.size(), 0);
    for (const auto& l : r.at(ptrs[i] + "/lines")) {
      auto it = std::find(ch.categories.begin(), ch.categories.end(), l.at("name").get<std::string>());
      v[std::size_t(it - ch.categories.begin())] += l.at("bytes").get<double>() / kGiB;
    }
    ch.values.push_back(v);
    ch.bar_labels.push_back(ptrs.size() > 1 ? "stage " + std::to_string(i) : "one GPU");
    ch.bar_notes.push_back(fmt_bytes(r.number(ptrs[i] + "/total_bytes")));
  }
  ch.refs.push_back({cap / kGiB, "capacity " + fmt_bytes(cap), true, kReferenceColor});
  s.blocks.push_back(
      Figure{ch.title, svg::stacked_bars(ch),
             "Each bar is one GPU's memory split by what holds it; the dashed line is the GPU's "
             "memory. " +
                 std::string(ptrs.size() > 1 ? "One bar per pipeline stage." : "")});

  Table t;
  t.caption = "The ledger of " + scope + " (the stage with the largest total)";
  t.header = {"line", "bytes", "share", "how it is counted"};
  const auto& lines = r.at(ledger + "/lines");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string p = ledger + "/lines/" + std::to_string(i);
    const double b = r.number(p + "/bytes");
    t.rows.push_back({text(r.string(p + "/name")), r.bytes(p + "/bytes"),
                      derived(total > 0 ? b / total : 0, [](double x) { return fmt_percent(x, 1); }),
                      text(r.string(p + "/note"))});
  }
  t.rows.push_back({text("total"), r.bytes(ledger + "/total_bytes"), text(""), text("")});
  t.rows.push_back({text("capacity"), r.bytes(ledger + "/capacity_bytes"), text(""), text("")});
  s.blocks.push_back(t);
  return s;
}

}  // namespace infraplan::report
