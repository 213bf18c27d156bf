// Reading little-endian fields out of untrusted bytes (ELF images, fatbins, DWARF): every offset is
// range-checked by the caller with in_range before load reads it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace nvfresh {

// True when [offset, offset + length) lies inside bytes of `size` (no overflow).
inline bool in_range(std::uint64_t offset, std::uint64_t length, std::uint64_t size)
{
  return offset <= size && length <= size - offset;
}

// The T at `offset` (host byte order: x86-64 and every CUDA host is little-endian).
template <typename T>
T load(std::string_view bytes, std::uint64_t offset)
{
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

}  // namespace nvfresh
