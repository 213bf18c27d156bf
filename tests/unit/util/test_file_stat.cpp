#include "temp_dir.hpp"
#include "util/file_stat.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace nvfresh;

TEST_CASE("stat tells files, directories and absent paths apart", "[file_stat]")
{
  test::TempDir dir;
  const std::string file = dir.path("a.h");
  std::ofstream(file) << "int x;\n";
  const FileStat regular = stat_file(file);
  CHECK(regular.exists);
  CHECK(regular.is_regular);
  CHECK_FALSE(regular.is_directory);
  CHECK(regular.size == 7);
  CHECK(regular.inode != 0);

  const FileStat directory = stat_file(dir.path());
  CHECK(directory.exists);
  CHECK(directory.is_directory);
  CHECK_FALSE(directory.is_regular);

  CHECK_FALSE(stat_file(dir.path("absent.h")).exists);
  CHECK_FALSE(stat_file(dir.path("a.h/below-a-file")).exists);
}

TEST_CASE("stat follows a symlink, lstat does not", "[file_stat]")
{
  test::TempDir dir;
  std::ofstream(dir.path("target.h")) << "x";
  std::filesystem::create_symlink(dir.path("target.h"), dir.path("link.h"));
  CHECK(stat_file(dir.path("link.h")).is_regular);
  const FileStat link = lstat_file(dir.path("link.h"));
  CHECK(link.exists);
  CHECK_FALSE(link.is_regular);
  std::filesystem::remove(dir.path("target.h"));
  CHECK_FALSE(stat_file(dir.path("link.h")).exists);  // dangling
  CHECK(lstat_file(dir.path("link.h")).exists);
}

TEST_CASE("stat_file_at names a file relative to an open directory", "[file_stat]")
{
  test::TempDir dir;
  std::ofstream(dir.path("k.cu")) << "__global__ void k() {}\n";
  const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  CHECK(stat_file_at(fd, "k.cu").same_content_stamp(stat_file(dir.path("k.cu"))));
  CHECK_FALSE(stat_file_at(fd, "absent.cu").exists);
  ::close(fd);
}

TEST_CASE("the content stamp changes with the size, the mtime or the inode", "[file_stat]")
{
  test::TempDir dir;
  const std::string path = dir.path("a.h");
  std::ofstream(path) << "1";
  const FileStat first = stat_file(path);
  CHECK(first.same_content_stamp(stat_file(path)));

  const timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
  CHECK_FALSE(first.same_content_stamp(stat_file(path)));  // mtime (and ctime)

  std::ofstream(dir.path("b.h")) << "1";
  std::filesystem::rename(dir.path("b.h"), path);
  const FileStat replaced = stat_file(path);
  CHECK(replaced.inode != first.inode);
  CHECK_FALSE(first.same_content_stamp(replaced));

  struct stat raw {};
  REQUIRE(::stat(path.c_str(), &raw) == 0);
  CHECK(file_stat_from(raw).same_content_stamp(replaced));
}
