// The step cache's runner: nvfresh started in place of cicc or ptxas inside nvcc's process tree.
// The tracer (lib/trace/nvfresh_trace.c) execs `nvfresh __step <tool> <argv...>` instead of the
// tool when NVFRESH_STEP_RUNNER names this executable (set by the compile plan when the cache and
// the step cache are on). nvcc keeps orchestrating: no --dryrun is read.
//
// A hit writes the step's outputs where nvcc expects them, sends on the trace channel the process,
// reads and lookups the served step stands for (so the compile's record is as complete as with the
// real tool), prints what the tool printed and exits 0. A miss runs the tool under a trace channel
// of its own, passes its output and status on, forwards its trace lines, and stores the step when
// it exited 0 with every output present and non-empty, read nothing of nvcc's temporary files it
// was not given, and lost no trace line. Anything that goes wrong before the tool ran execs the
// tool plainly: the step cache never makes a compile fail.
//
// With a remote cache (NVFRESH_REMOTE), a local miss asks the remote for the step's entry
// (cache/remote_cache.hpp, step_action), which is judged like a local one and stored locally; a
// stored step is uploaded unless the remote is read-only. A remote that failed is said once per
// build and not asked again: the marker "remote-failed" in NVFRESH_STEP_RECORD_ROOT, as for objects.
#pragma once

#include "util/environment.hpp"

#include <string>
#include <vector>

namespace nvfresh {

inline constexpr const char* k_step_subcommand = "__step";
inline constexpr const char* k_step_runner_variable = "NVFRESH_STEP_RUNNER";
// LD_PRELOAD as the tracer found it: the runner starts without one, the tool gets it back.
inline constexpr const char* k_step_preload_variable = "NVFRESH_STEP_PRELOAD";
// Where the runner appends each step's outcome (record/step_events.hpp), set by the compile plan:
// the build tree's record root, the compile's output, and an id of this compile.
inline constexpr const char* k_step_record_root_variable = "NVFRESH_STEP_RECORD_ROOT";
inline constexpr const char* k_step_object_variable = "NVFRESH_STEP_OBJECT";
inline constexpr const char* k_step_run_variable = "NVFRESH_STEP_RUN";

// args: <tool path as execve named it> <argv[0]> <argv[1]> ...; returns the exit status (or does
// not return: an exec of the tool, or a re-raised signal).
int run_step(const std::vector<std::string>& args, const Environment& env);

}  // namespace nvfresh
