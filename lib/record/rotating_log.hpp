// A build tree's append-only logs (events.log, steps.log): each line appended with a single write,
// so that parallel compiles never interleave, and rotated once past a size (the file becomes
// <file>.1, replacing the one before) so that it does not grow without bound.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nvfresh {

// Appends `line` (with its LF) to `file`, creating its directory; rotates it past rotate_bytes.
// Never throws: a log that cannot be written loses the line.
void append_rotating_line(const std::string& file, std::string_view line,
                          std::int64_t rotate_bytes);

// <file>.1 and <file> read one after the other, oldest first ("" for what does not exist).
std::string read_rotated_text(const std::string& file);

}  // namespace nvfresh
