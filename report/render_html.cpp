// The HTML writer: one page, everything inline.
#include <type_traits>

#include "report/format.hpp"
#include "report/render.hpp"

namespace infraplan::report {

namespace {

// Readable at 1,280 px (a centred column of at most 1,180 px) and on paper (A4/Letter: no
// navigation, charts and tables kept whole, black text).
constexpr const char* kStyle = R"CSS(
:root{--ink:#222;--muted:#5a5a5a;--line:#d9d9d9;--band:#f5f6f8;--accent:#0072B2;--warn:#D55E00}
*{box-sizing:border-box}
html{font-size:15px}
body{margin:0;color:var(--ink);background:#fff;line-height:1.45;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans","Liberation Sans",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 32px 48px}
header h1{font-size:1.75rem;margin:0 0 4px}
.subtitle{color:var(--muted);margin:0 0 12px}
nav{border-top:1px solid var(--line);border-bottom:1px solid var(--line);padding:6px 0;margin-bottom:8px}
nav a{color:var(--accent);text-decoration:none;margin-right:18px;white-space:nowrap}
section{margin-top:28px}
h2{font-size:1.3rem;border-bottom:2px solid var(--ink);padding-bottom:3px;margin:0 0 12px}
h3{font-size:1.05rem;margin:18px 0 6px}
p{margin:6px 0 10px;max-width:75em}
p.note{color:var(--muted);font-size:.87rem}
ul{margin:6px 0 12px;padding-left:22px}
li{margin:3px 0}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:10px;margin:10px 0 16px}
.figure{border:1px solid var(--line);border-radius:6px;padding:8px 12px;background:var(--band)}
.figure .label{color:var(--muted);font-size:.82rem}
.figure .value{font-size:1.3rem;font-weight:600;font-variant-numeric:tabular-nums}
.figure .detail{color:var(--muted);font-size:.8rem}
table{border-collapse:collapse;margin:6px 0 14px;font-size:.9rem;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);font-size:.85rem;padding-bottom:4px}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;vertical-align:top}
th{background:var(--band);text-align:left;font-weight:600}
td.n{text-align:right;white-space:nowrap}
tr.best td{background:#e6f1f8;font-weight:600}
figure{margin:12px 0 20px;break-inside:avoid;page-break-inside:avoid}
figure svg{width:100%;height:auto;max-width:960px;display:block;font-family:inherit}
figcaption{color:var(--muted);font-size:.85rem;max-width:960px}
pre{background:var(--band);border:1px solid var(--line);padding:10px;overflow-x:auto;font-size:.8rem;max-height:36em}
footer{margin-top:36px;color:var(--muted);font-size:.8rem;border-top:1px solid var(--line);padding-top:8px}
@media print{
html{font-size:10.5pt}
main{max-width:none;padding:0}
nav{display:none}
section{break-before:auto}
h2{break-after:avoid}
table,.figures{break-inside:avoid}
pre{max-height:none;white-space:pre-wrap;word-break:break-all}
tr.best td{background:#eee}
}
@page{margin:14mm}
)CSS";

std::string value_html(const Value& v) {
  if (v.key.empty() || !v.raw) return html_escape(v.text);
  return "<span class=\"v\" data-result=\"" + std::to_string(v.result) + "\" data-key=\"" +
         html_escape(v.key) + "\" data-value=\"" + exact_number(*v.raw) + "\">" + html_escape(v.text) +
         "</span>";
}

void block_html(std::string& out, const Block& b) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Paragraph>) {
          out += x.note ? "<p class=\"note\">" : "<p>";
          out += html_escape(x.text) + "</p>\n";
        } else if constexpr (std::is_same_v<T, BulletList>) {
          out += "<ul>";
          for (const auto& i : x.items) out += "<li>" + html_escape(i) + "</li>";
          out += "</ul>\n";
        } else if constexpr (std::is_same_v<T, KeyFigures>) {
          out += "<div class=\"figures\">";
          for (const auto& i : x.items) {
            out += "<div class=\"figure\"><div class=\"label\">" + html_escape(i.label) +
                   "</div><div class=\"value\">" + value_html(i.value) + "</div>";
            if (!i.detail.empty()) out += "<div class=\"detail\">" + html_escape(i.detail) + "</div>";
            out += "</div>";
          }
          out += "</div>\n";
        } else if constexpr (std::is_same_v<T, Table>) {
          out += "<table>";
          if (!x.caption.empty()) out += "<caption>" + html_escape(x.caption) + "</caption>";
          out += "<thead><tr>";
          for (const auto& h : x.header) out += "<th>" + html_escape(h) + "</th>";
          out += "</tr></thead><tbody>";
          for (std::size_t r = 0; r < x.rows.size(); ++r) {
            out += int(r) == x.highlight_row ? "<tr class=\"best\">" : "<tr>";
            for (const auto& v : x.rows[r])
              out += (v.numeric ? "<td class=\"n\">" : "<td>") + value_html(v) + "</td>";
            out += "</tr>";
          }
          out += "</tbody></table>\n";
        } else if constexpr (std::is_same_v<T, Figure>) {
          out += "<figure>" + x.svg;
          if (!x.caption.empty()) out += "<figcaption>" + html_escape(x.caption) + "</figcaption>";
          out += "</figure>\n";
        } else if constexpr (std::is_same_v<T, Code>) {
          out += "<pre><code>" + html_escape(x.text) + "</code></pre>\n";
        }
      },
      b);
}

}  // namespace

std::string render_html(const Document& d, const RenderOptions& o) {
  std::string out;
  out.reserve(1 << 16);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "img-src data:\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  if (!o.generator.empty()) out += "<meta name=\"generator\" content=\"" + html_escape(o.generator) + "\">\n";
  out +=
      "<title>" + html_escape(d.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n";
  out += "<header><h1>" + html_escape(d.title) + "</h1>";
  if (!d.subtitle.empty()) out += "<p class=\"subtitle\">" + html_escape(d.subtitle) + "</p>";
  out += "<nav>";
  for (const auto& s : d.sections)
    out += "<a href=\"#" + html_escape(s.id) + "\">" + html_escape(s.title) + "</a>";
  out += "</nav></header>\n";
  for (const auto& s : d.sections) {
    out += "<section id=\"" + html_escape(s.id) + "\">\n<h2>" + html_escape(s.title) + "</h2>\n";
    for (const auto& b : s.blocks) block_html(out, b);
    out += "</section>\n";
  }
  out +=
      "<footer>Written by " + html_escape(o.generator.empty() ? "infraplan" : o.generator) +
      ". Self-contained: no scripts, fonts or requests to the network.</footer>\n</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace infraplan::report
