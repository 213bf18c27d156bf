// The build tree's events log: one line per compile that reached nvfresh, with its named outcome
// and cause (outcome/outcome.hpp), appended with a single write so that parallel compiles never
// interleave. `nvfresh stats` counts them by kind and cause. Grammar at the top of events.cpp.
//
// It does not grow without bound: past k_events_rotate_bytes (about 50k compiles) events.log
// becomes events.log.1, replacing the one before; read_events reads both, oldest first.
#pragma once

#include "outcome/outcome.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nvfresh {

struct BuildEvent {
  std::int64_t time_ns = 0;
  Outcome outcome;
  std::int64_t duration_ns = 0;  // nvcc's run time; for a skip or a cache hit, the time it saved
  std::string object;            // the output, or "" when a passthrough names none
};

inline constexpr std::int64_t k_events_rotate_bytes = 8 << 20;

void append_event(const std::string& record_root, const BuildEvent& event,
                  std::int64_t rotate_bytes = k_events_rotate_bytes);  // never throws
std::vector<BuildEvent> read_events(const std::string& record_root);   // skips bad lines

// The text of one line without its LF, and a line parsed back (nullopt: not an events line).
std::string format_event_line(const BuildEvent& event);
std::optional<BuildEvent> parse_event_line(std::string_view line);

}  // namespace nvfresh
