// steps.log grammar, version 1 (fields escaped as in util/text_fields.hpp):
//   line := "s1" TAB time_ns TAB kind TAB cause TAB duration_ns TAB object TAB run TAB pass TAB
//           tool TAB detail LF
//   kind, cause := as in events.log (outcome_name, cause_name of outcome.hpp)
// A line that does not parse is skipped. steps.log.1 holds the lines before the last rotation.
#include "record/step_events.hpp"

#include "record/rotating_log.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvfresh {

namespace {

constexpr std::string_view k_line_tag = "s1";

}  // namespace

std::string steps_log_file(const std::string& record_root)
{
  return record_root + "/steps.log";
}

std::string format_step_event_line(const StepEvent& event)
{
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}", k_line_tag, event.time_ns,
                     outcome_name(event.outcome.kind), cause_name(event.outcome.cause),
                     event.duration_ns, escape_field(event.object), escape_field(event.run),
                     escape_field(event.pass), escape_field(event.tool),
                     escape_field(event.outcome.detail));
}

std::optional<StepEvent> parse_step_event_line(std::string_view line)
{
  auto fields = split_fields(line);
  if (!fields || fields->size() != 10 || (*fields)[0] != k_line_tag) {
    return std::nullopt;
  }
  const auto& f = *fields;
  StepEvent event;
  auto kind = outcome_from_name(f[2]);
  auto cause = cause_from_name(f[3]);
  if (!kind || !cause || !parse_number(f[1], event.time_ns) ||
      !parse_number(f[4], event.duration_ns)) {
    return std::nullopt;
  }
  event.outcome = {*kind, *cause, f[9]};
  event.object = f[5];
  event.run = f[6];
  event.pass = f[7];
  event.tool = f[8];
  return event;
}

void append_step_event(const std::string& record_root, const StepEvent& event,
                       std::int64_t rotate_bytes)
{
  append_rotating_line(steps_log_file(record_root), format_step_event_line(event) + "\n",
                       rotate_bytes);
}

std::vector<StepEvent> read_step_events(const std::string& record_root)
{
  return read_rotated_lines(steps_log_file(record_root),
                            [](std::string_view line) { return parse_step_event_line(line); });
}

std::string arch_of_pass(std::string_view pass)
{
  for (std::string_view prefix : {"compute_", "sm_", "lto_"}) {
    if (pass.starts_with(prefix) && pass.size() > prefix.size()) {
      return std::string(pass.substr(prefix.size()));
    }
  }
  return std::string(pass);
}

std::vector<StepEvent> last_run_steps(const std::vector<StepEvent>& events,
                                      const std::string& object)
{
  auto last = std::find_if(events.rbegin(), events.rend(),
                           [&](const StepEvent& event) { return event.object == object; });
  if (last == events.rend()) {
    return {};
  }
  std::vector<StepEvent> steps;
  std::copy_if(
    events.begin(), events.end(), std::back_inserter(steps),
    [&](const StepEvent& event) { return event.object == object && event.run == last->run; });
  return steps;
}

}  // namespace nvfresh
