#include "temp_dir.hpp"
#include "util/hasher.hpp"
#include "util/xxh3_avx2.hpp"

#include <catch2/catch.hpp>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

using namespace nvfresh;

TEST_CASE("digest hex round trip", "[hasher]")
{
  Digest digest = hash_bytes("kernel_forward.h");
  REQUIRE(digest.to_hex().size() == 32);
  REQUIRE(Digest::from_hex(digest.to_hex()) == digest);
  REQUIRE(digest.short_hex() == digest.to_hex().substr(0, 8));
  REQUIRE_FALSE(Digest::from_hex("xyz").has_value());
  REQUIRE_FALSE(Digest::from_hex(std::string(32, 'g')).has_value());
}

TEST_CASE("fields are delimited so that adjacent values cannot collide", "[hasher]")
{
  Hasher a;
  a.field("-I").field("-O2");
  Hasher b;
  b.field("-I-O2");
  Hasher c;
  c.field("-I-").field("O2");
  REQUIRE(a.digest() != b.digest());
  REQUIRE(a.digest() != c.digest());
  Hasher tagged;
  tagged.tag("args").field("-O2");
  Hasher untagged;
  untagged.field("-O2");
  REQUIRE(tagged.digest() != untagged.digest());
}

TEST_CASE("file hashes follow content", "[hasher]")
{
  test::TempDir dir;
  auto a = dir.write("a.h", "#define X 1\n");
  auto b = dir.write("b.h", "#define X 1\n");
  auto c = dir.write("c.h", "#define X 2\n");
  REQUIRE(hash_file(a) == hash_file(b));
  REQUIRE(hash_file(a) != hash_file(c));
  REQUIRE(hash_file(a) == hash_bytes("#define X 1\n"));
  REQUIRE_FALSE(hash_file(dir.path("missing.h")).has_value());
}

// The library's own XXH3-128 (its SSE2 build), as canonical bytes: what every digest nvfresh ever
// wrote is, whichever implementation hashed it.
namespace {

std::array<std::uint8_t, 16> library_xxh3_128(std::string_view data)
{
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(data.data(), data.size()));
  std::array<std::uint8_t, 16> bytes{};
  std::copy(std::begin(canonical.digest), std::end(canonical.digest), bytes.begin());
  return bytes;
}

std::string pseudo_random_bytes(std::size_t size)
{
  std::string bytes(size, '\0');
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (char& byte : bytes) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    byte = static_cast<char>(x);
  }
  return bytes;
}

}  // namespace

TEST_CASE("hashes are the library's XXH3-128 at every length, one shot and streamed", "[hasher]")
{
  // XXH3 takes different paths at 0, 1-3, 4-8, 9-16, 17-128, 129-240 bytes, then stripes of 64
  // and blocks of 1024 (the vector code): lengths around each edge, and a few megabytes.
  const std::string data = pseudo_random_bytes(std::size_t{3} << 20);
  for (std::size_t size : {0,   1,   3,   4,   8,    9,    16,   17,   128,   129,
                           240, 241, 255, 256, 1023, 1024, 1025, 4096, 65536, 100'003}) {
    const std::string_view part(data.data(), size);
    INFO(size);
    CHECK(hash_bytes(part).bytes == library_xxh3_128(part));
    Hasher streamed;
    for (std::size_t at = 0; at < size; at += 97) {
      streamed.add(part.substr(at, 97));  // chunks that straddle every stripe and block
    }
    CHECK(streamed.digest().bytes == library_xxh3_128(part));
  }
  CHECK(hash_bytes(data).bytes == library_xxh3_128(data));
  test::TempDir dir;
  const std::string file = dir.write("big.bin", data);
  REQUIRE(hash_file(file).has_value());
  CHECK(hash_file(file)->bytes == library_xxh3_128(data));
}

#if defined(__x86_64__) && defined(NVFRESH_XXH3_AVX2)
TEST_CASE("the AVX2 build of XXH3 gives the library's hashes", "[hasher]")
{
  if (__builtin_cpu_supports("avx2") == 0) {
    WARN("this CPU has no AVX2: hash_bytes uses the library's code, tested above");
    return;
  }
  const std::string data = pseudo_random_bytes(std::size_t{1} << 20);
  for (std::size_t size : {0, 5, 130, 1024, 4097, 1'000'001}) {
    const std::string_view part(data.data(), size);
    INFO(size);
    const xxh3_avx2::Hash128 one_shot = xxh3_avx2::hash(part.data(), part.size());
    const XXH128_hash_t library = XXH3_128bits(part.data(), part.size());
    CHECK(one_shot.low == library.low64);
    CHECK(one_shot.high == library.high64);
    void* state = xxh3_avx2::new_state();
    REQUIRE(state != nullptr);
    xxh3_avx2::update(state, part.data(), part.size() / 3);
    xxh3_avx2::update(state, part.data() + part.size() / 3, part.size() - part.size() / 3);
    const xxh3_avx2::Hash128 streamed = xxh3_avx2::digest(state);
    xxh3_avx2::delete_state(state);
    CHECK(streamed.low == library.low64);
    CHECK(streamed.high == library.high64);
  }
}
#endif
