#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("atomic writes replace the whole file and leave no temporary behind", "[file_io]")
{
  test::TempDir dir;
  std::string path = dir.path("record.rec");
  write_file_atomically(path, "first");
  write_file_atomically(path, "second version");
  REQUIRE(read_file(path) == "second version");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  REQUIRE(files == 1);
  REQUIRE_THROWS_WITH(write_file_atomically(dir.path("missing/dir/x"), "x"),
                      Catch::Contains("cannot write"));
}

TEST_CASE("touch_file creates the file and stamps it with the file system's now", "[file_io]")
{
  test::TempDir dir;
  std::string path = dir.path("stamp");
  touch_file(path);
  FileStat created = stat_file(path);
  REQUIRE(created.is_regular);
  set_mtime_ns(path, 1);
  REQUIRE(stat_file(path).mtime_ns == 1);
  touch_file(path);
  FileStat touched = stat_file(path);
  REQUIRE(touched.mtime_ns >= created.mtime_ns);
  REQUIRE(touched.mtime_ns <= now_ns());
}

TEST_CASE("paths are made absolute lexically", "[file_io]")
{
  REQUIRE(absolute_path("a/../b/./c.h", "/build") == "/build/b/c.h");
  REQUIRE(absolute_path("/x//y/", "/build") == "/x/y");
  REQUIRE(lexically_normal("/usr/local/cuda/bin/../targets") == "/usr/local/cuda/targets");
  REQUIRE_FALSE(stat_file("/nonexistent/file").exists);
}
