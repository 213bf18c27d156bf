// Shared pieces of the libFuzzer targets in tests/fuzz: the input as text, a scratch directory for
// parsers that read files (options files, response files, the config, the events log), sealing a
// record body with its checksum so that mutations reach the parser behind the checksum, and a loud
// failure for a broken property.
#pragma once

#include "util/hasher.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <stdlib.h>

namespace nvfresh::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size)
{
  return {reinterpret_cast<const char*>(data), size};
}

// A property of the parser does not hold: say which, and crash so that libFuzzer keeps the input.
[[noreturn]] inline void fail(const char* property)
{
  std::fprintf(stderr, "fuzz property broken: %s\n", property);
  std::abort();
}

// One directory per fuzzer process, removed when the process ends normally.
class ScratchDir {
public:
  static ScratchDir& get()
  {
    static ScratchDir dir;
    return dir;
  }
  const std::string& path() const { return m_path; }
  std::string file(const std::string& name) const { return m_path + "/" + name; }
  std::string write(const std::string& name, std::string_view bytes) const
  {
    const std::string full = file(name);
    std::ofstream(full, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return full;
  }
  ~ScratchDir()
  {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

private:
  ScratchDir()
  {
    std::string pattern = (std::filesystem::temp_directory_path() / "nvfresh-fuzz.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      fail("cannot create a scratch directory");
    }
    m_path = pattern;
  }
  std::string m_path;
};

// Splits the input at every `separator` byte (an input without one is one part).
inline std::vector<std::string_view> split_parts(std::string_view text, char separator)
{
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = text.find(separator, begin);
    parts.push_back(
      text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) {
      return parts;
    }
    begin = end + 1;
  }
}

// nvfresh's line formats end in "checksum TAB <XXH3-128 of everything before> LF". A mutated
// input almost never carries the right checksum, so the parser would reject it at once: this
// replaces a final checksum line (or appends one) with the right checksum, so that the fuzzer
// explores the lines behind it.
inline std::string sealed(std::string_view text)
{
  std::string body(text);
  if (!body.empty() && body.back() == '\n') {
    const std::size_t last = body.rfind('\n', body.size() - 2);
    const std::size_t start = last == std::string::npos ? 0 : last + 1;
    if (body.compare(start, 9, "checksum\t") == 0) {
      body.resize(start);
    }
  } else if (!body.empty()) {
    body += '\n';
  }
  return body + "checksum\t" + hash_bytes(body).to_hex() + "\n";
}

}  // namespace nvfresh::fuzz
