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

// What a skip or a cache hit does once its outcome is logged. The launcher ends the process there
// (stdio flushed, then _exit): freeing the record, the stat memo and the entry one by one was an
// eighth of a skip (2.1M of 17.9M instructions, FMHA TU), and nothing else is left to do. Tests
// that drive run_compile in-process keep the default.
enum class AfterUnchangedPath { return_status, exit_process };

// command: the compiler chain and its arguments ("nvcc -c a.cu -o a.o", "ccache nvcc ...").
// Returns the compiler's exit status (or does not return: a compiler killed by a signal makes
// nvfresh die of the same signal; a skip or hit with AfterUnchangedPath::exit_process exits 0).
int run_compile(const std::vector<std::string>& command, const Environment& env,
                ProcessRunner& runner,
                AfterUnchangedPath after = AfterUnchangedPath::return_status);

}  // namespace nvfresh
