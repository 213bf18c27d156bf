#include "proof/link_command.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("an executable link names its output and other file operands", "[link_command]")
{
  auto edge = describe_link_command(
    {"/usr/bin/c++", "main.o", "-o", "t", "-Wl,-rpath,/b", "libp.so", "-ldl"}, "/b");
  REQUIRE(edge);
  CHECK(edge->artifact == "/b/t");
  CHECK(edge->kind == ArtifactKind::executable);
  CHECK(edge->objects == std::vector<std::string>{"/b/main.o"});
  CHECK(edge->libraries == std::vector<std::string>{"/b/libp.so"});
  CHECK_FALSE(describe_link_command({"/usr/bin/cmake", "-E", "rm", "-f", "libst.a"}, "/b"));
}

TEST_CASE("a compile through a link launcher is not a link", "[link_command]")
{
  // torch's JIT build.ninja runs its C++ compiles and its link with the same $cxx.
  CHECK_FALSE(describe_link_command(
    {"c++", "-MMD", "-MF", "main.o.d", "-c", "main.cpp", "-o", "main.o"}, "/b"));
  CHECK_FALSE(describe_link_command({"c++", "-S", "main.cpp", "-o", "main.s"}, "/b"));
  CHECK_FALSE(describe_link_command({"c++", "-E", "main.cpp", "-o", "main.i"}, "/b"));
  auto edge = describe_link_command(
    {"c++", "main.o", "cuda.cuda.o", "-shared", "-L/t/lib", "-lc10", "-o", "ext.so"}, "/b");
  REQUIRE(edge);
  CHECK(edge->kind == ArtifactKind::shared_library);
  CHECK(edge->objects == std::vector<std::string>{"/b/main.o", "/b/cuda.cuda.o"});
}
