// XXH3-128 behind one small class: swapping the algorithm is a change to this file and hasher.cpp.
// Fields are delimited so that ("-I", "-O2") and ("-I-O2") cannot collide; every key starts with
// a format prefix so that a change of semantics invalidates all old keys.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

struct Digest {
  std::array<std::uint8_t, 16> bytes{};
  std::string to_hex() const;
  static std::optional<Digest> from_hex(std::string_view hex);
  std::string short_hex() const { return to_hex().substr(0, 8); }
  bool operator==(const Digest&) const = default;
  auto operator<=>(const Digest&) const = default;
};

class Hasher {
public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  Hasher& add(std::string_view data);     // raw bytes, no delimiter
  Hasher& field(std::string_view value);  // length-prefixed: fields never run into each other
  Hasher& tag(std::string_view name);     // starts a named section ("args", "env", ...)
  Digest digest() const;

private:
  bool m_avx2;  // m_state is xxh3_avx2's (util/xxh3_avx2.hpp), else the library's
  void* m_state;
};

Digest hash_bytes(std::string_view data);

// Hashes a file's content in chunks. nullopt when it cannot be opened or read.
std::optional<Digest> hash_file(const std::string& path);

}  // namespace nvfresh
