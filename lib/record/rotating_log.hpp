// A build tree's append-only logs (events.log, steps.log): each line appended with a single write,
// so that parallel compiles never interleave, and rotated once past a size (the file becomes
// <file>.1, replacing the one before) so that it does not grow without bound.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace nvfresh {

// Appends `line` (with its LF) to `file`, creating its directory; rotates it past rotate_bytes.
// Never throws: a log that cannot be written loses the line.
void append_rotating_line(const std::string& file, std::string_view line,
                          std::int64_t rotate_bytes);

// <file>.1 and <file> read one after the other, oldest first ("" for what does not exist).
std::string read_rotated_text(const std::string& file);

// The lines of read_rotated_text(file) that `parse` reads (nullopt: a torn or foreign line, left
// out), oldest first.
template <typename Parse>
auto read_rotated_lines(const std::string& file, Parse parse)
{
  std::vector<typename std::invoke_result_t<Parse, std::string_view>::value_type> lines;
  const std::string text = read_rotated_text(file);
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    if (auto line = parse(std::string_view(text).substr(begin, end - begin))) {
      lines.push_back(std::move(*line));
    }
    begin = end + 1;
  }
  return lines;
}

}  // namespace nvfresh
