// libFuzzer target for lib/depfile: parse_depfile must never crash, and whatever it accepts with
// representable prerequisites must survive format_depfile -> parse_depfile unchanged.
// Seeds: tests/unit/data/depfiles (special characters) and tests/fuzz/corpus/depfile (nvcc 13.0 -MD, -MP).
#include "compile/depfile.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

bool all_representable(const nvfresh::Depfile& depfile)
{
  for (const std::string& path : depfile.prerequisites) {
    if (!nvfresh::depfile_can_represent(path)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto depfile = nvfresh::parse_depfile(text);
  if (!depfile || !all_representable(*depfile)) {
    return 0;
  }
  for (const bool phony : {false, true}) {
    const std::string written = nvfresh::format_depfile("out.o", depfile->prerequisites, phony);
    const auto again = nvfresh::parse_depfile(written);
    if (!again || again->prerequisites != depfile->prerequisites) {
      std::abort();
    }
  }
  return 0;
}
