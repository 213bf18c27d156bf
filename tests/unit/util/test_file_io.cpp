#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <filesystem>

#include <unistd.h>

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

TEST_CASE("an atomic write over an existing file swaps it in and leaves other names alone",
          "[file_io]")
{
  test::TempDir dir;
  std::string path = dir.path("record.rec");
  write_file_atomically(path, "old");
  REQUIRE(::link(path.c_str(), dir.path("other-name").c_str()) == 0);
  const FileStat before = stat_file(path);
  write_file_atomically(path, "new");
  CHECK(read_file(path) == "new");
  CHECK(stat_file(path).inode != before.inode);
  CHECK(read_file(dir.path("other-name")) == "old");  // a hard link keeps the old file, as rename
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  CHECK(files == 2);  // no temporary, no old file left behind
}

TEST_CASE("an atomic write over a directory fails as rename does and leaves it in place",
          "[file_io]")
{
  test::TempDir dir;
  std::string path = dir.path("d");
  std::filesystem::create_directory(path);
  write_file_atomically(path + "/inside", "x");
  REQUIRE_THROWS_WITH(write_file_atomically(path, "file"), Catch::Contains("cannot write"));
  CHECK(stat_file(path).is_directory);
  CHECK(read_file(path + "/inside") == "x");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
  }
  CHECK(files == 1);
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

TEST_CASE("a write that found no room names the full file system; the caller adds what to do",
          "[file_io]")
{
  test::TempDir dir;
  FileWriteError full(dir.path("a.rec"), ENOSPC);
  CHECK(full.disk_full());
  CHECK_THAT(full.what(), Catch::StartsWith("cannot write " + dir.path("a.rec") + ": ") &&
                            Catch::Contains(" is full (") && Catch::Contains(" free of "));
  FileWriteError advised = full.with_advice("free space there");
  CHECK_THAT(advised.what(), Catch::EndsWith("): free space there"));
  CHECK(advised.path() == dir.path("a.rec"));

  FileWriteError quota(dir.path("a.rec"), EDQUOT);
  CHECK_THAT(quota.with_advice("x").what(),
             Catch::Contains("disk quota on ") && Catch::EndsWith(": x"));

  FileWriteError denied(dir.path("a.rec"), EACCES);
  CHECK_FALSE(denied.disk_full());
  CHECK(std::string(denied.with_advice("free space there").what()) == std::string(denied.what()));
  CHECK_THAT(denied.what(), Catch::Contains("Permission denied"));
}

TEST_CASE("atomic writes and directory creation throw FileWriteError naming the file", "[file_io]")
{
  test::TempDir dir;
  dir.write("file", "x");
  REQUIRE_THROWS_AS(make_directories(dir.path("file/sub")), FileWriteError);
  try {
    write_file_atomically(dir.path("missing/x"), "x");
    FAIL("no error");
  } catch (const FileWriteError& error) {
    CHECK(error.path() == dir.path("missing/x"));  // the file asked for, not its temporary
    CHECK(error.error() == ENOENT);
  }
}

TEST_CASE("an atomic write never writes through a link planted at its temporary name", "[file_io]")
{
  test::TempDir dir;
  const std::string victim = dir.write("victim", "precious\n");
  const std::string path = dir.path("target");
  // The temporary names this process can use next (<path>.nvfresh-tmp.<pid>.<n>), each a link.
  for (int n = 0; n < 4096; ++n) {
    std::filesystem::create_symlink(victim,
                                    fmt::format("{}.nvfresh-tmp.{}.{}", path, ::getpid(), n));
  }
  CHECK_THROWS_AS(write_file_atomically(path, "new\n"), FileWriteError);
  CHECK(*try_read_file(victim) == "precious\n");
}
