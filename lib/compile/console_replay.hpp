// What a compile printed, replayed when nvcc does not run (a skip, a cache hit): the same bytes to
// the same streams, and only when the compiler would print them the same way now.
#pragma once

#include "record/record.hpp"
#include "util/environment.hpp"

#include <string>

namespace nvfresh {

// Why replaying what the last compile printed might not be what the compiler would print now (""
// when it would be): a compile that printed nothing prints nothing anywhere; otherwise the streams
// that are terminals now (terminal_streams()) and, on a terminal, TERM, COLUMNS, GCC_COLORS, ... of
// env_now must be as they were.
std::string console_replay_doubt(const Record& previous, const std::string& terminals_now,
                                 const Environment& env_now);

// Writes the record's console output to stdout and stderr as the compile printed it.
void replay_console(const Record& record);

}  // namespace nvfresh
