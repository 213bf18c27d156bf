#include "report/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ctime>

namespace nvfresh {

namespace {

constexpr size_t k_chart_rows = 20;
constexpr size_t k_table_rows = 200;

constexpr std::string_view k_style = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:22px;font-weight:600}
header p{margin:4px 0 0;color:#b7bfcc;font-size:13px}
main{padding:8px 32px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:16px 20px;margin:16px 0}
h2{font-size:17px;margin:0 0 10px}
.note{color:#5b6475;font-size:13px;margin:0 0 10px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #dde1e7;border-radius:6px;padding:10px 14px;min-width:120px}
.card .v{font-size:22px;font-weight:600}
.card .l{color:#5b6475;font-size:12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceef2;vertical-align:top}
th{color:#5b6475;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.path{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;word-break:break-all}
.fresh{color:#1a7f37;font-weight:600}.stale{color:#c62828;font-weight:600}.unrecorded{color:#8a6d00}
svg text{font:12px ui-monospace,Menlo,Consolas,monospace;fill:#1d2330}
)";

std::string seconds_text(std::int64_t ns)
{
  return fmt::format("{:.2f}", static_cast<double>(ns) / 1e9);
}

std::string utc_text(std::int64_t ns)
{
  if (ns <= 0) {
    return "-";
  }
  std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text.data();
}

// The end of a path: its last `parts` components ("include/kernel_forward.h").
std::string short_path(const std::string& path, int parts = 2)
{
  size_t cut = path.size();
  for (int i = 0; i < parts; ++i) {
    cut = path.rfind('/', cut == 0 ? 0 : cut - 1);
    if (cut == std::string::npos) {
      return path;
    }
  }
  return path.substr(cut + 1);
}

void card(std::string& out, std::string_view key, const std::string& value, std::string_view label)
{
  out += fmt::format(
    R"(<div class="card"><div class="v" data-key="{}">{}</div><div class="l">{}</div></div>)", key,
    html_escape(value), label);
}

void summary_cards(std::string& out, std::string_view prefix, const BuildSummary& summary)
{
  out += R"(<div class="cards">)";
  card(out, fmt::format("{}.compiles", prefix), std::to_string(summary.compiles), "compiles");
  for (std::string_view kind : {"compiled", "skipped", "served", "raced", "failed"}) {
    auto found = summary.outcomes.find(std::string(kind));
    size_t count = found == summary.outcomes.end() ? 0 : found->second.count;
    card(out, fmt::format("{}.{}", prefix, kind), std::to_string(count), kind);
  }
  card(out, fmt::format("{}.nvcc_seconds_spent", prefix), seconds_text(summary.nvcc_spent_ns),
       "nvcc seconds spent");
  card(out, fmt::format("{}.nvcc_seconds_saved", prefix), seconds_text(summary.nvcc_saved_ns),
       "nvcc seconds saved");
  out += "</div>";
}

struct Bar {
  std::string label;
  std::int64_t ns = 0;
};

// A horizontal bar chart: one row per bar, label left, bar and seconds right.
void bar_chart(std::string& out, std::string_view title, const std::vector<Bar>& bars,
               std::string_view colour)
{
  if (bars.empty()) {
    return;
  }
  constexpr int label_width = 300;
  constexpr int bar_width = 560;
  constexpr int row = 22;
  std::int64_t largest = 1;
  for (const auto& bar : bars) {
    largest = std::max(largest, bar.ns);
  }
  int height = static_cast<int>(bars.size()) * row + 4;
  out += fmt::format(
    R"(<svg role="img" aria-label="{}" style="max-width:100%;height:auto" width="{}" height="{}" viewBox="0 0 {} {}">)",
    html_escape(title), label_width + bar_width + 80, height, label_width + bar_width + 80, height);
  int y = 2;
  for (const auto& bar : bars) {
    double width = static_cast<double>(bar.ns) / static_cast<double>(largest) * bar_width;
    std::string label =
      bar.label.size() > 40 ? "…" + bar.label.substr(bar.label.size() - 39) : bar.label;
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", label_width - 8,
                       y + 15, html_escape(label));
    out += fmt::format(R"(<rect x="{}" y="{}" width="{:.1f}" height="{}" rx="2" fill="{}"/>)",
                       label_width, y + 3, std::max(width, 1.0), row - 6, colour);
    out += fmt::format(R"(<text x="{:.1f}" y="{}">{} s</text>)",
                       label_width + std::max(width, 1.0) + 6, y + 15, seconds_text(bar.ns));
    y += row;
  }
  out += "</svg>";
}

// "<what> by cause: input_changed 3, no_record 1", each count tagged <key>:<cause> (the page's
// test reads the numbers by those keys); nothing when there are none.
void causes_note(std::string& out, std::string_view what, std::string_view key,
                 const std::map<std::string, size_t>& causes)
{
  if (causes.empty()) {
    return;
  }
  out += fmt::format(R"(<p class="note">{} by cause: )", what);
  bool first = true;
  for (const auto& [cause, count] : causes) {
    out += fmt::format(R"({}{} <b data-key="{}:{}">{}</b>)", first ? "" : ", ", html_escape(cause),
                       key, html_escape(cause), count);
    first = false;
  }
  out += "</p>";
}

void section_summary(std::string& out, const Report& report)
{
  out += R"(<section id="summary"><h2>Objects now</h2><div class="cards">)";
  card(out, "objects.total", std::to_string(report.objects), "recorded objects");
  card(out, "objects.fresh", std::to_string(report.fresh), "fresh");
  card(out, "objects.stale", std::to_string(report.stale), "stale");
  out += "</div>";
  causes_note(out, "Stale", "stale_cause", report.stale_causes);
  out += fmt::format(R"(<h2 style="margin-top:16px">Last build</h2><p class="note">{} to {}</p>)",
                     utc_text(report.last_build.start_ns), utc_text(report.last_build.end_ns));
  summary_cards(out, "last_build", report.last_build);
  out += fmt::format(R"(<h2 style="margin-top:16px">History</h2><p class="note">{} to {}</p>)",
                     utc_text(report.history.start_ns), utc_text(report.history.end_ns));
  summary_cards(out, "history", report.history);
  out += "</section>";
}

void section_header_costs(std::string& out, const Report& report)
{
  out += R"(<section id="header-costs"><h2>What an edit costs</h2><p class="note">Every input
outside the toolchain, with the TUs that read it and the sum of their last compile times: the nvcc
time an edit of it costs.</p>)";
  std::vector<Bar> bars;
  for (size_t i = 0; i < std::min(report.header_costs.size(), k_chart_rows); ++i) {
    bars.push_back({short_path(report.header_costs[i].path), report.header_costs[i].cost_ns});
  }
  bar_chart(out, "edit cost per input", bars, "#d9822b");
  out += R"(<table><tr><th>input</th><th>TUs</th><th>nvcc seconds</th></tr>)";
  for (size_t i = 0; i < std::min(report.header_costs.size(), k_table_rows); ++i) {
    const auto& cost = report.header_costs[i];
    out += fmt::format(
      R"(<tr><td class="path">{}</td><td class="n" data-key="header_tus:{}">{}</td><td class="n" data-key="header_cost:{}">{}</td></tr>)",
      html_escape(cost.path), html_escape(cost.path), cost.objects.size(), html_escape(cost.path),
      seconds_text(cost.cost_ns));
  }
  out += "</table></section>";
}

void section_units(std::string& out, const Report& report)
{
  out += R"(<section id="units"><h2>Time per TU</h2><p class="note">The last compile's wall time of
each object.</p>)";
  std::vector<Bar> bars;
  for (size_t i = 0; i < std::min(report.units.size(), k_chart_rows); ++i) {
    bars.push_back({short_path(report.units[i].object), report.units[i].compile_ns});
  }
  bar_chart(out, "last compile time per TU", bars, "#3b6fd4");
  out += R"(<table><tr><th>object</th><th>state</th><th>last outcome</th><th>seconds</th></tr>)";
  for (size_t i = 0; i < std::min(report.units.size(), k_table_rows); ++i) {
    const auto& unit = report.units[i];
    std::string state = unit.fresh ? "fresh" : "stale";
    std::string reasons;
    for (const auto& reason : unit.stale_reasons) {
      reasons += "<br>" + html_escape(reason);
    }
    out += fmt::format(
      R"(<tr><td class="path">{}</td><td><span class="{}" data-key="unit_state:{}">{}</span>{}</td><td>{}</td><td class="n" data-key="unit_seconds:{}">{}</td></tr>)",
      html_escape(unit.object), state, html_escape(unit.object), state, reasons,
      html_escape(unit.last_outcome), html_escape(unit.object), seconds_text(unit.compile_ns));
  }
  out += "</table></section>";
}

// The parts of a TU's split in chart order, each with its wall time (the sum of its kinds' rows)
// and the steps the step cache served there.
struct PartTime {
  std::string part;
  std::int64_t ns = 0;
  size_t served = 0;
};

std::vector<PartTime> part_times(const PassSplit& split)
{
  std::vector<PartTime> parts;
  for (const auto& row : split.rows) {
    if (parts.empty() || parts.back().part != row.part) {
      parts.push_back({row.part, 0, 0});
    }
    parts.back().ns += row.ns;
    parts.back().served += row.served;
  }
  return parts;
}

std::string_view part_colour(const std::string& part, size_t index)
{
  static constexpr std::array<std::string_view, 6> k_arch_colours = {
    "#3b6fd4", "#7b4fc9", "#1a8f8f", "#c2417a", "#5d8a1c", "#b0672a"};
  if (part == "host") {
    return "#8a94a6";
  }
  if (part == "link") {
    return "#d9822b";
  }
  return k_arch_colours[index % k_arch_colours.size()];
}

// Where each TU's last compile went, one stacked bar per TU: host, each arch, link.
void section_passes(std::string& out, const Report& report)
{
  std::vector<const TranslationUnit*> units;
  std::vector<std::string> arch_order;
  for (const auto& unit : report.units) {
    if (unit.passes.rows.empty() || units.size() == k_chart_rows) {
      continue;
    }
    units.push_back(&unit);
    for (const auto& part : part_times(unit.passes)) {
      if (part.part != "host" && part.part != "link" &&
          std::find(arch_order.begin(), arch_order.end(), part.part) == arch_order.end()) {
        arch_order.push_back(part.part);
      }
    }
  }
  if (units.empty()) {
    return;
  }
  auto colour_of = [&](const std::string& part) {
    auto found = std::find(arch_order.begin(), arch_order.end(), part);
    return part_colour(part, static_cast<size_t>(found - arch_order.begin()));
  };
  out += R"(<section id="passes"><h2>Where nvcc's time went</h2><p class="note">The last compile
of each TU, per part: the host side (cudafe++, the host compiler), each arch (its preprocessing,
cicc, ptxas; a step the step cache served counts no time), and the link steps (fatbinary,
nvlink).</p><p class="note">)";
  std::vector<std::string> legend = {"host"};
  legend.insert(legend.end(), arch_order.begin(), arch_order.end());
  legend.emplace_back("link");
  for (const auto& part : legend) {
    out += fmt::format(
      R"(<span style="display:inline-block;width:10px;height:10px;background:{};margin:0 4px 0 12px"></span>{})",
      colour_of(part), html_escape(part));
  }
  out += "</p>";
  constexpr int label_width = 300;
  constexpr int bar_width = 560;
  constexpr int row = 22;
  std::int64_t largest = 1;
  for (const auto* unit : units) {
    std::int64_t total = 0;
    for (const auto& part : part_times(unit->passes)) {
      total += part.ns;
    }
    largest = std::max(largest, total);
  }
  int height = static_cast<int>(units.size()) * row + 4;
  out += fmt::format(
    R"(<svg role="img" aria-label="time per pass" style="max-width:100%;height:auto" width="{}" height="{}" viewBox="0 0 {} {}">)",
    label_width + bar_width + 80, height, label_width + bar_width + 80, height);
  int y = 2;
  for (const auto* unit : units) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", label_width - 8,
                       y + 15, html_escape(short_path(unit->object)));
    double x = label_width;
    std::int64_t total = 0;
    for (const auto& part : part_times(unit->passes)) {
      double width = static_cast<double>(part.ns) / static_cast<double>(largest) * bar_width;
      out += fmt::format(
        R"(<rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{} {} s</title></rect>)",
        x, y + 3, width, row - 6, colour_of(part.part), html_escape(part.part),
        seconds_text(part.ns));
      x += width;
      total += part.ns;
    }
    out +=
      fmt::format(R"(<text x="{:.1f}" y="{}">{} s</text>)", x + 6, y + 15, seconds_text(total));
    y += row;
  }
  out += "</svg>";
  out += R"(<table><tr><th>object</th><th>part</th><th>seconds</th><th>served steps</th></tr>)";
  for (const auto* unit : units) {
    for (const auto& part : part_times(unit->passes)) {
      std::string key = html_escape(unit->object) + ":" + html_escape(part.part);
      out += fmt::format(
        R"(<tr><td class="path">{}</td><td>{}</td><td class="n" data-key="pass_seconds:{}">{}</td><td class="n" data-key="pass_served:{}">{}</td></tr>)",
        html_escape(short_path(unit->object)), html_escape(part.part), key, seconds_text(part.ns),
        key, part.served);
    }
  }
  out += "</table></section>";
}

void section_artifacts(std::string& out, const Report& report)
{
  out += R"(<section id="artifacts"><h2>Artifacts</h2>)";
  if (report.artifacts.empty()) {
    out += R"(<p class="note">No linked artifact found (no build graph, no link record).</p>)";
  }
  out += R"(<table><tr><th>artifact</th><th>kind</th><th>state</th><th>objects</th></tr>)";
  for (const auto& artifact : report.artifacts) {
    std::string state = artifact.fresh ? "fresh" : "stale";
    std::string objects;
    for (const auto& object : artifact.objects) {
      objects += fmt::format(R"({}<span class="{}">{}</span> {})", objects.empty() ? "" : "<br>",
                             object.state, object.state, html_escape(short_path(object.object, 1)));
    }
    std::string reasons;
    for (const auto& reason : artifact.reasons) {
      reasons += "<br>" + html_escape(reason);
    }
    out += fmt::format(
      R"(<tr><td class="path">{}</td><td>{}</td><td><span class="{}" data-key="artifact_state:{}">{}</span>{}</td><td class="path">{}</td></tr>)",
      html_escape(artifact.path), html_escape(artifact.kind), state, html_escape(artifact.path),
      state, reasons, objects);
  }
  out += "</table></section>";
}

void section_cache(std::string& out, const Report& report)
{
  const CacheSplit& cache = report.cache;
  size_t looked_up = cache.hits + cache.misses;
  out += R"(<section id="cache"><h2>Cache: the real split</h2><p class="note">Every compile
counted per object: served from the cache (hit), compiled (miss, with its cause), or skipped
(nothing to do, neither).</p><div class="cards">)";
  card(out, "cache.hits", std::to_string(cache.hits), "hits (served)");
  card(out, "cache.misses", std::to_string(cache.misses), "misses (compiled)");
  card(out, "cache.skipped", std::to_string(cache.skipped), "skipped");
  card(out, "cache.hit_rate",
       looked_up == 0 ? "-"
                      : fmt::format("{:.1f}%", 100.0 * static_cast<double>(cache.hits) /
                                                 static_cast<double>(looked_up)),
       "hit rate");
  out += "</div>";
  causes_note(out, "Misses", "miss_cause", cache.miss_causes);
  if (!report.store.dir.empty()) {
    const StoreCounters& store = report.store;
    out += fmt::format(R"(<p class="note">The shared cache {} (every tree using it): whole objects
<b data-key="store.hits">{}</b> hits, <b data-key="store.misses">{}</b> misses; tool steps (cicc,
ptxas) <b data-key="store.step_hits">{}</b> served, <b data-key="store.step_misses">{}</b> run,
{} s of tool time saved.</p>)",
                       html_escape(store.dir), store.hits, store.misses, store.step_hits,
                       store.step_misses, seconds_text(store.step_saved_ns));
  }
  out +=
    R"(<table><tr><th>object</th><th>hits</th><th>misses</th><th>skipped</th><th>miss causes</th></tr>)";
  for (size_t i = 0; i < std::min(cache.objects.size(), k_table_rows); ++i) {
    const auto& entry = cache.objects[i];
    std::string causes;
    for (const auto& [cause, count] : entry.miss_causes) {
      causes += fmt::format("{}{} ×{}", causes.empty() ? "" : ", ", html_escape(cause), count);
    }
    out += fmt::format(
      R"(<tr><td class="path">{}</td><td class="n" data-key="cache_hits:{}">{}</td><td class="n" data-key="cache_misses:{}">{}</td><td class="n">{}</td><td>{}</td></tr>)",
      html_escape(entry.object), html_escape(entry.object), entry.hits, html_escape(entry.object),
      entry.misses, entry.skipped, causes);
  }
  out += "</table></section>";
}

}  // namespace

std::string html_escape(std::string_view text)
{
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string render_report_html(const Report& report, std::int64_t generated_ns)
{
  std::string out = R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">)";
  out += R"(<meta name="viewport" content="width=device-width, initial-scale=1">)";
  out += "<title>nvfresh report</title><style>";
  out += k_style;
  out += "</style></head><body><header><h1>nvfresh report</h1>";
  out += fmt::format("<p>{} · made {}</p></header><main>", html_escape(report.record_root),
                     utc_text(generated_ns));
  section_summary(out, report);
  section_header_costs(out, report);
  section_units(out, report);
  section_passes(out, report);
  section_artifacts(out, report);
  section_cache(out, report);
  out += "</main></body></html>\n";
  return out;
}

}  // namespace nvfresh
