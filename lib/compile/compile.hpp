// One compile through nvfresh, end to end: parse -> plan -> skip? -> run nvcc -> record. The only
// file that orders these steps. Every compile ends in one named outcome (outcome/outcome.hpp),
// appended to the tree's events log. Never leaves the user worse off than plain nvcc:
//   - anything nvfresh does not handle runs the compiler unchanged (passthrough, with its cause);
//   - an internal failure before nvcc ran runs it plainly, with one "nvfresh:" line (fell-back);
//   - once nvcc has run it is never run again: a bookkeeping failure means "not recorded".
#pragma once

#include "util/environment.hpp"
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
