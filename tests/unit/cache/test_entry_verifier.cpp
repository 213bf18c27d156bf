#include "cache/entry_verifier.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("cache verify: a compile again writes only scratch files", "[cache]")
{
  using Args = std::vector<std::string>;
  CHECK(redirect_outputs({"nvcc", "-c", "k.cu", "-o", "CMakeFiles/k.o", "-MD", "-MF", "k.o.d"},
                         "/tmp/v/object.o", "/tmp/v/object.d") ==
        Args{"nvcc", "-c", "k.cu", "-o", "/tmp/v/object.o", "-MD", "-MF", "/tmp/v/object.d"});
  CHECK(redirect_outputs({"nvcc", "--output-file=k.o", "--dependency-output", "k.d"}, "/o", "/d") ==
        Args{"nvcc", "--output-file=/o", "--dependency-output", "/d"});
  CHECK(redirect_outputs({"nvcc", "-o"}, "/o", "/d") == Args{"nvcc", "-o"});
}

TEST_CASE("cache verify: the components whose digests differ, by name", "[cache]")
{
  std::map<std::string, Digest> entry = {{"host code", hash_bytes("h")},
                                         {"sm_90 cubin", hash_bytes("c")}};
  std::map<std::string, Digest> compiled = {{"host code", hash_bytes("h")},
                                            {"sm_90 cubin", hash_bytes("c2")},
                                            {"compute_90 ptx", hash_bytes("p")}};
  CHECK(differing_components(entry, compiled) == "compute_90 ptx, sm_90 cubin");
  CHECK(differing_components(entry, entry).empty());
}

TEST_CASE("cache verify: the digests of the object an entry holds, not those it claims", "[cache]")
{
  CacheEntry entry;
  entry.object = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";
  entry.components = {{"sm_90 ptx", hash_bytes("claimed")}};
  const auto held = held_components(entry);
  REQUIRE(held.size() == 1);
  CHECK(held.begin()->first == "sm_90 ptx");
  CHECK(held != entry.components);
  entry.object = "not an artifact";
  CHECK(held_components(entry).empty());
}
