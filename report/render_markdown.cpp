// The Markdown writer: the report's text and tables; charts are named, not drawn.
#include <type_traits>

#include "report/format.hpp"
#include "report/render.hpp"

namespace infraplan::report {

namespace {

void table_md(std::string& out, const std::vector<std::string>& header,
              const std::vector<std::vector<Value>>& rows, int highlight) {
  out += "|";
  for (const auto& h : header) out += " " + md_escape(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) {
    const bool numeric = !rows.empty() && i < rows[0].size() && rows[0][i].numeric;
    out += numeric ? " ---: |" : " --- |";
  }
  out += "\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const auto& v : rows[r]) {
      const std::string t = md_escape(v.text);
      out += " " + (int(r) == highlight && !t.empty() ? "**" + t + "**" : t) + " |";
    }
    out += "\n";
  }
  out += "\n";
}

void block_md(std::string& out, const Block& b) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Paragraph>) {
          out += (x.note ? "<sub>" + md_escape(x.text) + "</sub>" : md_escape(x.text)) + "\n\n";
        } else if constexpr (std::is_same_v<T, BulletList>) {
          for (const auto& i : x.items) out += "- " + md_escape(i) + "\n";
          out += "\n";
        } else if constexpr (std::is_same_v<T, KeyFigures>) {
          std::vector<std::vector<Value>> rows;
          for (const auto& i : x.items) rows.push_back({text(i.label), i.value, text(i.detail)});
          table_md(out, {"", "value", ""}, rows, -1);
        } else if constexpr (std::is_same_v<T, Table>) {
          if (!x.caption.empty()) out += "*" + md_escape(x.caption) + "*\n\n";
          table_md(out, x.header, x.rows, x.highlight_row);
        } else if constexpr (std::is_same_v<T, Figure>) {
          out += "*Chart in the HTML report: " + md_escape(x.title) + ".*\n\n";
        } else if constexpr (std::is_same_v<T, Code>) {
          out += "```" + x.language + "\n" + x.text + (x.text.empty() || x.text.back() != '\n' ? "\n" : "") +
                 "```\n\n";
        }
      },
      b);
}

}  // namespace

std::string render_markdown(const Document& d, const RenderOptions& o) {
  std::string out = "# " + md_escape(d.title) + "\n\n";
  if (!d.subtitle.empty()) out += "_" + md_escape(d.subtitle) + "_\n\n";
  for (const auto& s : d.sections) {
    out += "## " + md_escape(s.title) + "\n\n";
    for (const auto& b : s.blocks) block_md(out, b);
  }
  if (!o.generator.empty()) out += "---\nWritten by " + md_escape(o.generator) + ".\n";
  return out;
}

}  // namespace infraplan::report
