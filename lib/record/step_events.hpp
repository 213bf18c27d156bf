// The build tree's steps log: one line per step of nvcc that the step cache stood in front of (a
// cicc or ptxas run inside a compile), with the one outcome model's kind and cause
// (outcome/outcome.hpp): served (cache_hit), compiled (step_not_cached, input_changed), failed
// (nvcc_exit_status: the tool failed) or passthrough (unsupported_option: -G, -lineinfo, ...).
// The step runner appends it (step/step_runner.hpp); `nvfresh stats` counts it per arch and
// `nvfresh explain` lists an object's last compile's steps. Grammar at the top of step_events.cpp.
#pragma once

#include "outcome/outcome.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct StepEvent {
  std::int64_t time_ns = 0;
  Outcome outcome;
  std::int64_t duration_ns = 0;  // the tool's run time; for a served step, the time it saved
  std::string object;            // the compile's output
  std::string run;               // nvcc's temporary stem: the steps of one nvcc run share it
  std::string pass;              // the tracer's pass tag ("compute_80" for cicc, "sm_80" for ptxas)
  std::string tool;              // "cicc", "ptxas"
};

inline constexpr std::int64_t k_steps_rotate_bytes = 8 << 20;

std::string steps_log_file(const std::string& record_root);
void append_step_event(const std::string& record_root, const StepEvent& event,
                       std::int64_t rotate_bytes = k_steps_rotate_bytes);  // never throws
std::vector<StepEvent> read_step_events(const std::string& record_root);   // skips bad lines

std::string format_step_event_line(const StepEvent& event);
std::optional<StepEvent> parse_step_event_line(std::string_view line);

// The arch a pass tag names: "80" for "compute_80" and "sm_80", "90a" for "sm_90a"; else the tag.
std::string arch_of_pass(std::string_view pass);

// The steps of the object's last nvcc run in the log (its newest line's run), oldest first.
std::vector<StepEvent> last_run_steps(const std::vector<StepEvent>& events,
                                      const std::string& object);

}  // namespace nvfresh
