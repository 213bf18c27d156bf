#include "util/hasher.hpp"

#include "util/file_io.hpp"
#include "util/xxh3_avx2.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <new>

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

namespace nvfresh {

namespace {

// AVX2 where the CPU has it (util/xxh3_avx2.hpp); the library's SSE2 code elsewhere. The same
// hashes either way.
bool use_avx2()
{
#if defined(__x86_64__) && defined(NVFRESH_XXH3_AVX2)
  static const bool available = __builtin_cpu_supports("avx2") != 0;
  return available;
#else
  return false;
#endif
}

Digest from_xxh128(XXH128_hash_t hash)
{
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  Digest digest;
  for (size_t i = 0; i < digest.bytes.size(); ++i) {
    digest.bytes[i] = canonical.digest[i];
  }
  return digest;
}

constexpr std::array<std::int8_t, 256> make_hex_table()
{
  std::array<std::int8_t, 256> table{};
  for (auto& entry : table) {
    entry = -1;
  }
  for (int c = '0'; c <= '9'; ++c) {
    table[static_cast<size_t>(c)] = static_cast<std::int8_t>(c - '0');
  }
  for (int c = 'a'; c <= 'f'; ++c) {
    table[static_cast<size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
  }
  return table;
}

constexpr std::array<std::int8_t, 256> k_hex_table = make_hex_table();

int hex_value(char c)
{
  return k_hex_table[static_cast<unsigned char>(c)];
}

}  // namespace

std::string Digest::to_hex() const
{
  constexpr char k_digits[] = "0123456789abcdef";
  std::string hex(bytes.size() * 2, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    hex[2 * i] = k_digits[byte >> 4];
    hex[2 * i + 1] = k_digits[byte & 0xf];
  }
  return hex;
}

std::optional<Digest> Digest::from_hex(std::string_view hex)
{
  Digest digest;
  if (hex.size() != digest.bytes.size() * 2) {
    return std::nullopt;
  }
  for (size_t i = 0; i < digest.bytes.size(); ++i) {
    int high = hex_value(hex[2 * i]);
    int low = hex_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    digest.bytes[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return digest;
}

Hasher::Hasher() : m_avx2(use_avx2()), m_state(m_avx2 ? xxh3_avx2::new_state() : XXH3_createState())
{
  if (m_state == nullptr) {
    throw std::bad_alloc();
  }
  if (!m_avx2) {
    XXH3_128bits_reset(static_cast<XXH3_state_t*>(m_state));
  }
}

Hasher::~Hasher()
{
  if (m_avx2) {
    xxh3_avx2::delete_state(m_state);
  } else {
    XXH3_freeState(static_cast<XXH3_state_t*>(m_state));
  }
}

Hasher& Hasher::add(std::string_view data)
{
  if (m_avx2) {
    xxh3_avx2::update(m_state, data.data(), data.size());
  } else {
    XXH3_128bits_update(static_cast<XXH3_state_t*>(m_state), data.data(), data.size());
  }
  return *this;
}

Hasher& Hasher::field(std::string_view value)
{
  std::uint64_t size = value.size();
  add(std::string_view(reinterpret_cast<const char*>(&size), sizeof(size)));
  return add(value);
}

Hasher& Hasher::tag(std::string_view name)
{
  add(std::string_view("\x00#", 2));
  return field(name);
}

Digest Hasher::digest() const
{
  if (m_avx2) {
    const xxh3_avx2::Hash128 value = xxh3_avx2::digest(m_state);
    return from_xxh128({value.low, value.high});
  }
  return from_xxh128(XXH3_128bits_digest(static_cast<XXH3_state_t*>(m_state)));
}

Digest hash_bytes(std::string_view data)
{
  if (use_avx2()) {
    const xxh3_avx2::Hash128 value = xxh3_avx2::hash(data.data(), data.size());
    return from_xxh128({value.low, value.high});
  }
  return from_xxh128(XXH3_128bits(data.data(), data.size()));
}

std::optional<Digest> hash_file(const std::string& path)
{
  int fd = open_regular_file(path);
  if (fd < 0) {
    return std::nullopt;
  }
  Hasher hasher;
  bool ok = read_chunks(fd, [&](std::string_view chunk) {
    hasher.add(chunk);
    return true;
  });
  ::close(fd);
  return ok ? std::optional<Digest>(hasher.digest()) : std::nullopt;
}

}  // namespace nvfresh
