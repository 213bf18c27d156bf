#include "space/activity.hpp"
#include "space/build_lock.hpp"
#include "space/registry.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("the tree of a record root: its parent, or the build tree of the working directory",
          "[activity]")
{
  test::TempDir dir;
  dir.write("build/CMakeCache.txt", "");
  CHECK(build_tree_of("/b/.nvfresh", "/anywhere") == "/b");
  CHECK(build_tree_of("/records/elsewhere", dir.path("build/sub/dir")) == dir.path("build"));
  CHECK(build_tree_of("/records/elsewhere", dir.path("plain")) == dir.path("plain"));
}

TEST_CASE("entering a build tree takes its lock and registers it", "[activity]")
{
  test::TempDir dir;
  dir.write("src/CMakeLists.txt", "");
  dir.write("build/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + dir.path("src") + "\n");
  enter_build_tree(dir.path("build/.nvfresh"), dir.path("build"),
                   {{"XDG_STATE_HOME", dir.path("state")}});
  CHECK(probe_build_lock(dir.path("build/.nvfresh")) == LockState::held);
  auto entries = list_registry(dir.path("state/nvfresh/trees"));
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].tree == dir.path("build"));
  CHECK(entries[0].source_dir == dir.path("src"));

  // Neither a record root nor a state dir that cannot be written is an error.
  dir.write("file", "");
  enter_build_tree(dir.path("file/.nvfresh"), dir.path("file"),
                   {{"XDG_STATE_HOME", dir.path("file/state")}});
  CHECK(probe_build_lock(dir.path("file/.nvfresh")) == LockState::no_lock_file);
}
