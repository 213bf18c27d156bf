#include "space/build_lock.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>

using namespace nvfresh;

TEST_CASE("a held build lock reads as running; a free one can be taken exclusively", "[build_lock]")
{
  test::TempDir dir;
  const std::string root = dir.path("build/.nvfresh");
  CHECK(probe_build_lock(root) == LockState::no_lock_file);
  CHECK_FALSE(std::filesystem::exists(root));  // probing creates nothing

  std::filesystem::create_directories(root);
  {
    ExclusiveBuildLock exclusive(root);
    CHECK(exclusive.taken());
    CHECK(probe_build_lock(root) == LockState::held);
  }
  CHECK(probe_build_lock(root) == LockState::idle);

  hold_build_lock_for_process(dir.path("other/.nvfresh"));  // creates its record root
  CHECK(probe_build_lock(dir.path("other/.nvfresh")) == LockState::held);
  CHECK_FALSE(ExclusiveBuildLock(dir.path("other/.nvfresh")).taken());
  hold_build_lock_for_process(dir.path("other/.nvfresh"));  // again: nothing more
}

TEST_CASE("the build lock ends with the process that held it", "[build_lock]")
{
  test::TempDir dir;
  const std::string root = dir.path(".nvfresh");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    hold_build_lock_for_process(root);
    [[maybe_unused]] ssize_t ignored = ::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  CHECK(probe_build_lock(root) == LockState::held);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(probe_build_lock(root) == LockState::idle);
  ::close(ready[0]);
  ::close(ready[1]);
}
