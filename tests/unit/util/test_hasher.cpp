#include "temp_dir.hpp"
#include "util/hasher.hpp"

#include <catch2/catch.hpp>

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
