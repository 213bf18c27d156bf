#include "reapi/blob_digest.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <utime.h>

using namespace nvfresh;
using namespace nvfresh::reapi;

namespace {

// Every expected hash below is what coreutils' sha256sum prints for the same bytes, e.g.
//   printf 'abc' | sha256sum
// and for pattern(): python3 -c "import sys; sys.stdout.buffer.write(bytes((i*7+3)%251 for i in
//   range(5*1024*1024+17)))" | sha256sum
std::string pattern(size_t size)
{
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 7 + 3) % 251);
  }
  return bytes;
}

constexpr size_t k_large = 5 * 1024 * 1024 + 17;  // many read buffers, the last one partial
constexpr const char* k_large_hash =
  "bff535696990615f8779068f2a8463f7b2a0caea713fe1c2e5cd30b2ef7fbaf5";

// Dates the file `seconds` in the past (mtime; its ctime stays now).
void age(const std::string& path, int seconds)
{
  const auto then =
    std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()) - seconds;
  struct utimbuf times {
    then, then
  };
  REQUIRE(::utime(path.c_str(), &times) == 0);
}

}  // namespace

TEST_CASE("digest_of: SHA-256 of known bytes, as sha256sum says", "[blob_digest]")
{
  CHECK(digest_of("") ==
        BlobDigest{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 0});
  CHECK(digest_of("abc") ==
        BlobDigest{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 3});
  CHECK(digest_of("The quick brown fox jumps over the lazy dog") ==
        BlobDigest{"d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592", 43});
  // Bytes that are not text: a NUL inside, high bytes.
  CHECK(digest_of(std::string("\x00\xff\n\t", 4)) ==
        BlobDigest{"54879ba73f30511c116a91a7e9e1d8fb5a24704eb16232531f5558e1cc89068d", 4});
  CHECK(digest_of(pattern(k_large)) == BlobDigest{k_large_hash, k_large});
}

TEST_CASE("digest_of_file: the same digest, streamed from a file", "[blob_digest]")
{
  test::TempDir dir;
  CHECK(digest_of_file(dir.write("empty", "")) == digest_of(""));
  CHECK(digest_of_file(dir.write("abc", "abc")) == digest_of("abc"));
  const std::string large = dir.write("large", pattern(k_large));
  CHECK(digest_of_file(large) == BlobDigest{k_large_hash, k_large});
  CHECK_THROWS_WITH(digest_of_file(dir.path("missing")),
                    Catch::Contains("cannot read " + dir.path("missing")));
  CHECK_THROWS_WITH(digest_of_file(dir.path()), Catch::Contains("cannot read"));  // a directory
}

TEST_CASE("DigestCache: a large old file is hashed once, and again when its stat changes",
          "[blob_digest]")
{
  test::TempDir dir;
  const std::string tool = dir.write("cicc", pattern(k_large));
  const std::string small = dir.write("small", "abc");
  age(tool, 60);
  // The ctime of a file cannot be set back: wait until it is more than a second old.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string young = dir.write("young", pattern(DigestCache::k_min_size));
  const std::string file = dir.path("digests");
  {
    DigestCache cache(file);
    CHECK(cache.digest_of_file(tool) == BlobDigest{k_large_hash, k_large});
    CHECK(cache.digest_of_file(small) == digest_of("abc"));
    CHECK(cache.digest_of_file(young) == digest_of(pattern(DigestCache::k_min_size)));
    cache.save();
  }
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(text,
             Catch::StartsWith(tool + "\t") && Catch::EndsWith(std::string(k_large_hash) + "\n"));
  CHECK_THAT(text, !Catch::Contains(small));  // under k_min_size: never kept
  CHECK_THAT(text, !Catch::Contains(young));  // written just now: it may still change unseen

  // A kept entry answers without reading: a cache file whose hash is not the content's proves it.
  std::string forged = text;
  forged.replace(forged.size() - 65, 64, std::string(64, 'f'));
  std::ofstream(file, std::ios::trunc) << forged << "a line that does not parse\n";
  {
    DigestCache cache(file);
    CHECK(cache.digest_of_file(tool).hash == std::string(64, 'f'));
    // The file changed (size and mtime): hashed again.
    std::ofstream(tool, std::ios::app) << "x";
    CHECK(cache.digest_of_file(tool) == digest_of(pattern(k_large) + "x"));
  }
}
