// Which build this process belongs to: the nearest ancestor that is a build tool (ninja, make,
// cmake --build, ...), named by its pid and start time, so that a message meant once per build
// (the cache is full) is said once however many compiles the build runs.
#pragma once

#include <string>

namespace nvfresh {

// "ninja 4242 123456" (name, pid, start time in clock ticks), or "session <sid>" when no ancestor
// is a build tool.
std::string build_invocation_id();

// True the first time it is called for `marker_file` in this build (build_invocation_id()), false
// after; every compile of one build shares the marker. Never throws (a marker that cannot be kept
// means true: say it rather than hide it).
bool first_time_this_build(const std::string& marker_file);
// The same for the build `build_id` (build_invocation_id() of a process of that build): for a
// process that runs on after its build, detached from it (a background upload).
bool first_time_this_build(const std::string& marker_file, const std::string& build_id);

// Whether first_time_this_build(marker_file) was called already in this build; changes nothing.
bool already_this_build(const std::string& marker_file);
bool already_this_build(const std::string& marker_file, const std::string& build_id);

}  // namespace nvfresh
