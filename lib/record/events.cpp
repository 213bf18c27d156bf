// events.log grammar, version 2 (fields escaped as in util/text_fields.hpp):
//   line    := v2_line | v1_line
//   v2_line := time_ns TAB kind TAB cause TAB duration_ns TAB object TAB detail LF
//   v1_line := time_ns TAB kind TAB duration_ns TAB object TAB detail LF      (nvfresh before the
//              outcome model; read with cause "unknown")
//   kind    := "compiled" | "skipped" | "served" | "raced" | "failed" | "not-recorded" |
//              "passthrough" | "fell-back"                       (outcome_name in outcome.hpp)
//   cause   := a cause_name of outcome.hpp ("input_changed", "not_a_compile", ...)
// A line that does not parse (torn by a crash, edited by hand, an unknown kind) is skipped.
// events.log.1 holds the lines before the last rotation.
#include "record/events.hpp"

#include "record/rotating_log.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

namespace nvfresh {

namespace {

std::string events_file(const std::string& record_root)
{
  return record_root + "/events.log";
}

}  // namespace

std::string format_event_line(const BuildEvent& event)
{
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}", event.time_ns, outcome_name(event.outcome.kind),
                     cause_name(event.outcome.cause), event.duration_ns, escape_field(event.object),
                     escape_field(event.outcome.detail));
}

std::optional<BuildEvent> parse_event_line(std::string_view line)
{
  auto fields = split_fields(line);
  if (!fields || (fields->size() != 6 && fields->size() != 5)) {
    return std::nullopt;
  }
  const auto& f = *fields;
  const bool v2 = f.size() == 6;
  BuildEvent event;
  auto kind = outcome_from_name(f[1]);
  auto cause = v2 ? cause_from_name(f[2]) : std::optional<Cause>(Cause::unknown);
  if (!kind || !cause || !parse_number(f[0], event.time_ns) ||
      !parse_number(f[v2 ? 3 : 2], event.duration_ns)) {
    return std::nullopt;
  }
  event.outcome = {*kind, *cause, f[v2 ? 5 : 4]};
  event.object = f[v2 ? 4 : 3];
  return event;
}

void append_event(const std::string& record_root, const BuildEvent& event,
                  std::int64_t rotate_bytes)
{
  append_rotating_line(events_file(record_root), format_event_line(event) + "\n", rotate_bytes);
}

std::vector<BuildEvent> read_events(const std::string& record_root)
{
  return read_rotated_lines(events_file(record_root),
                            [](std::string_view line) { return parse_event_line(line); });
}

}  // namespace nvfresh
