// libFuzzer target for lib/cache/line_layout: the input is taken as cicc's preprocessed input and as
// an output of cicc. Properties: a line table reads back as written; an output moved from a table to
// the same table comes back unchanged, when it is moved at all; the input with a blank line added
// at a place the first byte picks has the same code, and moving the input (as an output) to its
// table and back gives the input again, when both moves are made.
// Seeds: tests/fuzz/corpus/line_layout (a small preprocessed CUDA file with markers and flags).
#include "cache/line_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto layout = nvfresh::split_line_layout(text);
  if (!layout) {
    return 0;
  }
  if (nvfresh::parse_line_table(nvfresh::serialize_line_table(layout->table)) != layout->table) {
    std::abort();  // a table does not read back as written
  }
  if (auto same = nvfresh::move_lines(text, layout->table, layout->table); same && *same != text) {
    std::abort();  // moved nowhere, yet changed
  }
  if (size == 0) {
    return 0;
  }
  size_t at = text.find('\n', data[0] % size);
  if (at == std::string_view::npos) {
    return 0;
  }
  std::string shifted(text);
  shifted.insert(at + 1, "\n");
  const auto moved = nvfresh::split_line_layout(shifted);
  if (!moved || moved->code != layout->code) {
    std::abort();  // a blank line changed the code
  }
  if (auto there = nvfresh::move_lines(text, layout->table, moved->table)) {
    if (auto back = nvfresh::move_lines(*there, moved->table, layout->table);
        back && *back != text) {
      std::abort();  // there and back is not where it started
    }
  }
  return 0;
}
