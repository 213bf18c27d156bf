// libFuzzer target: digest_bytes on arbitrary bytes must either succeed or throw DigestError.
// Seeds: tests/unit/data/objects/ (real nvcc objects, a cubin) and tests/fuzz/corpus/object_digest
// (an LTO-IR object, two archs with PTX).
#include "digest/object_digest.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  try {
    (void)nvfresh::digest_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                "fuzz-input");
  } catch (const nvfresh::DigestError&) {
  }
  return 0;
}
