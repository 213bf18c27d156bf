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
#pragma once

#include "util/environment.hpp"

#include <string>
#include <vector>

namespace nvfresh {

inline constexpr const char* k_step_subcommand = "__step";
inline constexpr const char* k_step_runner_variable = "NVFRESH_STEP_RUNNER";
// LD_PRELOAD as the tracer found it: the runner starts without one, the tool gets it back.
inline constexpr const char* k_step_preload_variable = "NVFRESH_STEP_PRELOAD";

// args: <tool path as execve named it> <argv[0]> <argv[1]> ...; returns the exit status (or does
// not return: an exec of the tool, or a re-raised signal).
int run_step(const std::vector<std::string>& args, const Environment& env);

}  // namespace nvfresh
