// Helpers shared by the digest unit tests: stored objects and a deterministic corruption generator.
#pragma once

#include "util/file_io.hpp"

#include <zstd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nvfresh::test {

inline std::string object_path(const std::string& name)
{
  return std::string(NVFRESH_TEST_DATA_DIR) + "/objects/" + name;
}

inline std::string load_object(const std::string& name)
{
  return read_file(object_path(name));
}

// A stored object kept zstd-compressed (`name` ends in .zst) to stay small in the repository.
inline std::string load_compressed_object(const std::string& name)
{
  const std::string packed = read_file(object_path(name));
  const unsigned long long size = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    throw std::runtime_error(name + ": not a zstd frame with a recorded size");
  }
  std::string bytes(size, '\0');
  const std::size_t written =
    ZSTD_decompress(bytes.data(), bytes.size(), packed.data(), packed.size());
  if (ZSTD_isError(written) != 0 || written != size) {
    throw std::runtime_error(name + ": cannot decompress");
  }
  return bytes;
}

// xorshift64*: the same sequence on every platform and run, unlike std:: distributions.
class Corrupter {
public:
  explicit Corrupter(std::uint64_t seed) : m_state(seed) {}

  std::uint64_t next()
  {
    m_state ^= m_state >> 12;
    m_state ^= m_state << 25;
    m_state ^= m_state >> 27;
    return m_state * 0x2545F4914F6CDD1DULL;
  }

  // Case i: flips 1-8 bytes, or truncates, or both.
  std::string mutate(const std::string& original)
  {
    std::string bytes = original;
    const auto flips = 1 + next() % 8;
    for (std::uint64_t i = 0; i < flips && !bytes.empty(); ++i) {
      bytes[next() % bytes.size()] = static_cast<char>(next() & 0xFF);
    }
    if (next() % 4 == 0) {
      bytes.resize(next() % (bytes.size() + 1));
    }
    return bytes;
  }

private:
  std::uint64_t m_state;
};

// Writes a little-endian integer of `size` bytes at `offset`.
inline void put_le(std::string& bytes, std::size_t offset, std::uint64_t value, std::size_t size)
{
  for (std::size_t i = 0; i < size; ++i) {
    bytes[offset + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  }
}

}  // namespace nvfresh::test
