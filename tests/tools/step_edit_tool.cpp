// Test tool for tests/integration/test_step_cache.py: appends text to the outputs of a step entry
// whose pass starts with a prefix ("compute_": cicc's PTX) and saves the entry as nvfresh would
// (valid checksum, compressed): a tampered entry that only a comparison with the tool's own output
// can catch. Usage: step_edit_tool <entry.step> <pass prefix> <text>; exit 1 when it is another
// pass's entry.
#include "cache/step_entry.hpp"
#include "util/compressed_file.hpp"

#include <fmt/format.h>

#include <string>

int main(int argc, char** argv)
{
  if (argc != 4) {
    fmt::print(stderr, "usage: step_edit_tool <entry.step> <pass prefix> <text>\n");
    return 2;
  }
  const std::string file = argv[1];
  auto text = nvfresh::try_read_compressed_file(file);
  std::string error;
  auto entry = text ? nvfresh::parse_step_entry(*text, &error) : std::nullopt;
  if (!entry) {
    fmt::print(stderr, "step_edit_tool: {}: {}\n", file, text ? error : "unreadable");
    return 2;
  }
  if (!entry->pass.starts_with(argv[2])) {
    return 1;
  }
  for (auto& output : entry->outputs) {
    output.content += argv[3];
  }
  nvfresh::write_compressed_file(file, nvfresh::serialize_step_entry(*entry));
  return 0;
}
