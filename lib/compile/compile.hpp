// One compile through nvfresh, end to end: parse -> plan -> run nvcc -> record. The only file that
// orders these steps. Never leaves the user worse off than plain nvcc:
//   - anything nvfresh cannot handle runs the compiler unchanged (a named FallbackReason);
//   - an internal failure before nvcc ran runs it plainly, with one "nvfresh:" line on stderr;
//   - once nvcc has run it is never run again: a bookkeeping failure means "not recorded".
#pragma once

#include "config/config.hpp"
#include "util/process.hpp"

#include <string>
#include <vector>

namespace nvfresh {

// command: the compiler chain and its arguments ("nvcc -c a.cu -o a.o", "ccache nvcc ...").
// Returns the compiler's exit status (or does not return: a compiler killed by a signal makes
// nvfresh die of the same signal).
int run_compile(const std::vector<std::string>& command, const Environment& env,
                ProcessRunner& runner);

}  // namespace nvfresh
