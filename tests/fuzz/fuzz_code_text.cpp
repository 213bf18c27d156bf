// libFuzzer target for lib/cache/code_text: code_text must never crash, and what it gives is a
// fixed point (its own code text: nothing it keeps would be taken out on a second pass), with no
// more lines than the input (comments go, their newlines stay, only blank lines at the end go).
// Seeds: tests/fuzz/corpus/code_text (a C++ header and a CUDA file, as .txt, with every kind of comment and literal).
#include "cache/code_text.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto code = nvfresh::code_text(text);
  if (!code) {
    return 0;
  }
  if (std::count(code->begin(), code->end(), '\n') > std::count(text.begin(), text.end(), '\n')) {
    std::abort();  // a line was made up
  }
  const auto again = nvfresh::code_text(*code);
  if (!again || *again != *code) {
    std::abort();  // not a fixed point: the first pass kept or made something it would take out
  }
  return 0;
}
