#include "cache/tree_roots.hpp"

#include "../temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace nvfresh;

TEST_CASE("tree roots: paths under a root become tree-relative keys, and back onto another tree",
          "[cache]")
{
  PathMap here({"/home/a/build", "/home/a/src", "", ""});
  PathMap there({"/ci/job/out", "/ci/job/checkout", "", ""});
  const std::string key = here.to_key("/home/a/src/include/kernel_forward.h");
  CHECK(key != "/home/a/src/include/kernel_forward.h");
  CHECK(there.to_tree(key) == "/ci/job/checkout/include/kernel_forward.h");
  CHECK(there.to_tree(here.to_key("/home/a/build/gen/config.h")) == "/ci/job/out/gen/config.h");
  SECTION("a path outside both roots stays absolute")
  {
    CHECK(here.to_key("/usr/local/cuda/include/cuda.h") == "/usr/local/cuda/include/cuda.h");
    CHECK(there.to_tree("/usr/local/cuda/include/cuda.h") == "/usr/local/cuda/include/cuda.h");
  }
  SECTION("a root ends where a path component ends")
  {
    CHECK(here.to_key("/home/a/build2/x.h") == "/home/a/build2/x.h");
    CHECK(here.to_key("/home/a/srcs/x.h") == "/home/a/srcs/x.h");
    CHECK(here.to_key("/home/a/build") != "/home/a/build");
  }
  SECTION("the deeper root wins when one holds the other")
  {
    PathMap nested({"/w/src/build", "/w/src", "", ""});
    PathMap other({"/x/b", "/x/s", "", ""});
    CHECK(other.to_tree(nested.to_key("/w/src/build/a.o")) == "/x/b/a.o");
    CHECK(other.to_tree(nested.to_key("/w/src/a.cu")) == "/x/s/a.cu");
  }
  SECTION("an alias (the root with symlinks resolved) maps to the same key")
  {
    PathMap aliased({"/link/build", "/link/src", "/real/build", "/real/src"});
    CHECK(aliased.to_key("/real/src/a.h") == aliased.to_key("/link/src/a.h"));
  }
}

TEST_CASE("tree roots: free text (arguments, compiler messages) is mapped wherever a root occurs",
          "[cache]")
{
  PathMap here({"/home/a/build", "/home/a/src", "", ""});
  PathMap there({"/b", "/s", "", ""});
  const std::string message =
    "/home/a/src/k.cu(12): warning: x declared in \"/home/a/build/gen.h\"";
  CHECK(there.text_to_tree(here.text_to_key(message)) ==
        "/s/k.cu(12): warning: x declared in \"/b/gen.h\"");
  CHECK(here.text_to_key("-I/home/a/src/include") != "-I/home/a/src/include");
  CHECK(here.text_to_key("no paths at all") == "no paths at all");
  CHECK(here.names_a_root(std::string("\x7f"
                                      "ELF...DW_AT_comp_dir /home/a/build\0",
                                      36)));
  CHECK_FALSE(here.names_a_root("/home/a/buil"));
}

TEST_CASE("tree roots: the build tree, and the source tree from CMakeCache.txt", "[cache]")
{
  test::TempDir dir;
  CHECK(tree_roots_of(dir.path()).source.empty());
  std::ofstream(dir.path("CMakeCache.txt"))
    << "# comment\nCMAKE_HOME_DIRECTORY:INTERNAL=/home/a/src\nOTHER:STRING=x\n";
  TreeRoots roots = tree_roots_of(dir.path());
  CHECK(roots.build == dir.path());
  CHECK(roots.source == "/home/a/src");
}

TEST_CASE("tree roots: which roots bytes name, the deeper one alone where one holds the other",
          "[cache]")
{
  PathMap here({"/home/a/build", "/home/a/src", "", "/real/src"});
  using Bytes = std::string;
  const auto named = [&](const Bytes& bytes) {
    const PathMap::Named found = here.roots_named(bytes);
    return std::pair{found.build, found.source};
  };
  CHECK(named(Bytes("\0/home/a/src/k.cu\0", 18)) == std::pair{false, true});       // __FILE__
  CHECK(named(Bytes("comp_dir\0/home/a/build\0", 23)) == std::pair{true, false});  // -g
  CHECK(named("/real/src/k.cu") == std::pair{false, true});                        // an alias
  CHECK(named("/usr/include/stdio.h /home/a/bu") == std::pair{false, false});
  CHECK(named("/home/a/build/gen.h and /home/a/src/k.cu") == std::pair{true, true});
  SECTION("a build dir inside the checkout")
  {
    PathMap nested({"/w/src/build", "/w/src", "", ""});
    CHECK(nested.roots_named("x /w/src/build/gen/cfg.h").build);
    CHECK_FALSE(nested.roots_named("x /w/src/build/gen/cfg.h").source);
    CHECK(nested.roots_named("/w/src/k.cu").source);
    CHECK_FALSE(nested.roots_named("/w/src/k.cu").build);
  }
}
