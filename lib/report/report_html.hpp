// The report (build_report.hpp) as one self-contained HTML page: inline CSS, inline SVG bar
// charts, no script, no font or image fetched: it opens from a file on an air-gapped box. Each
// number a reader (or a test) may check carries a data-key attribute naming it, e.g.
// data-key="objects.fresh", data-key="header_cost:<path>" (value in seconds).
#pragma once

#include "report/build_report.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace nvfresh {

// generated_ns: when the page was made (shown in its head).
std::string render_report_html(const Report& report, std::int64_t generated_ns);

std::string html_escape(std::string_view text);

}  // namespace nvfresh
