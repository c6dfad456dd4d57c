#pragma once
// Writers of a report Document: one self-contained HTML page (inline CSS and SVG, no scripts, a
// Content-Security-Policy that forbids every network request, print styles), or Markdown
// (tables and text; charts become a one-line reference) for tickets and pull requests.
#include <string>

#include "report/document.hpp"

namespace infraplan::report {

struct RenderOptions {
  std::string generator;  ///< "infraplan 0.1.0 (abc123)", written into the page's meta and footer
};

std::string render_html(const Document& d, const RenderOptions& o = {});
std::string render_markdown(const Document& d, const RenderOptions& o = {});

}  // namespace infraplan::report
