// Test-only front end to lib/digest's fatbin reader, used by tests/integration/test_cuobjdump_agreement.py
// to compare nvfresh's extraction with cuobjdump's byte for byte.
//
//   fatbin_extract_tool <object|fatbin> <out dir>
//
// Writes each device entry's decompressed payload as <out dir>/<n>.<arch>.<cubin|ptx> (n counts per
// kind from 1, in fatbin order, as cuobjdump numbers its files) and prints one line per entry:
// "<file name> <compression>". Exit status 1 with the reader's message when the input is malformed,
// 2 on bad usage.
#include "digest/elf_reader.hpp"
#include "digest/fatbin_reader.hpp"
#include "util/file_io.hpp"

#include <fmt/core.h>

#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

std::vector<nvfresh::FatbinEntry> read_entries(const std::string& bytes, const std::string& what)
{
  if (nvfresh::looks_like_fatbin(bytes)) {
    return nvfresh::read_fatbin(bytes, what);
  }
  nvfresh::ElfReader elf(bytes, what);
  std::vector<nvfresh::FatbinEntry> entries;
  for (std::string_view section : nvfresh::find_fatbin_sections(elf, what)) {
    auto more = nvfresh::read_fatbin(section, what);
    entries.insert(entries.end(), more.begin(), more.end());
  }
  return entries;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 3) {
    fmt::print(stderr, "usage: fatbin_extract_tool <object|fatbin> <out dir>\n");
    return 2;
  }
  try {
    const std::string bytes = nvfresh::read_file(argv[1]);
    std::filesystem::create_directories(argv[2]);
    std::map<nvfresh::FatbinKind, int> counts;
    for (const auto& entry : read_entries(bytes, argv[1])) {
      int number = ++counts[entry.kind];
      std::string name =
        fmt::format("{}.{}.{}", number, entry.arch_name(), nvfresh::to_string(entry.kind));
      nvfresh::write_file_atomically((std::filesystem::path(argv[2]) / name).string(),
                                     entry.payload);
      fmt::print("{} {}\n", name, nvfresh::to_string(entry.compression));
    }
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "fatbin_extract_tool: {}\n", error.what());
    return 1;
  }
}
