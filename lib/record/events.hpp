// The build tree's events log: one line per compile that went through nvfresh (compiled, skipped,
// raced, failed, not-recorded), appended with a single write so that parallel compiles never
// interleave. `nvfresh stats` reads it. Grammar at the top of events.cpp.
//
// It does not grow without bound: past k_events_rotate_bytes (about 50k compiles) events.log
// becomes events.log.1, replacing the one before; read_events reads both, oldest first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvfresh {

struct BuildEvent {
  std::int64_t time_ns = 0;
  std::string event;             // "compiled", "skipped", "raced", "failed", "not-recorded"
  std::int64_t duration_ns = 0;  // nvcc's run time; for a skip, the compile time it saved
  std::string object;
  std::string reason;
};

inline constexpr std::int64_t k_events_rotate_bytes = 8 << 20;

void append_event(const std::string& record_root, const BuildEvent& event,
                  std::int64_t rotate_bytes = k_events_rotate_bytes);  // never throws
std::vector<BuildEvent> read_events(const std::string& record_root);   // skips bad lines

}  // namespace nvfresh
