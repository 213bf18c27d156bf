#include "temp_dir.hpp"
#include "util/disk_space.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("sizes are written in binary units, with one decimal below 10", "[disk_space]")
{
  CHECK(format_size(0) == "0 B");
  CHECK(format_size(1023) == "1023 B");
  CHECK(format_size(1024) == "1.0 KiB");
  CHECK(format_size(64 * 1024) == "64 KiB");
  CHECK(format_size(1048575) == "1.0 MiB");
  CHECK(format_size(3'328'599'654ULL) == "3.1 GiB");
  CHECK(format_size(10'690'000'000ULL) ==
        "10 GiB");  // 9.96 GiB rounds to 10, written without a decimal
  CHECK(format_size(900ULL << 30) == "900 GiB");
  CHECK(format_size(20ULL << 40) == "20 TiB");
}

TEST_CASE("used share as df computes it: used / (used + available)", "[disk_space]")
{
  FileSystemSpace space;
  space.used_bytes = 997;
  space.free_bytes = 3;
  space.total_bytes = 1100;  // reserved blocks count in neither
  CHECK(space.used_percent() == Approx(99.7));
  CHECK(FileSystemSpace{}.used_percent() == 0.0);
}

TEST_CASE("a path that does not exist yet is judged by its nearest existing directory",
          "[disk_space]")
{
  test::TempDir dir;
  CHECK(nearest_existing_directory(dir.path("not/there/a.o")) == dir.path());
  FileSystemSpace space = file_system_space(dir.path("not/there/a.o"));
  REQUIRE(space.known);
  CHECK(space.total_bytes > 0);
  CHECK(space.free_bytes <= space.total_bytes);
  FileSystemSpace root = file_system_space("/");
  CHECK(root.mount_point == "/");
  CHECK(file_system_space(dir.path()).device == stat_file(dir.path()).device);
}

TEST_CASE("a full file system is named with its free and total space", "[disk_space]")
{
  FileSystemSpace space;
  space.known = true;
  space.mount_point = "/tmp";
  space.total_bytes = 20ULL << 30;
  CHECK(describe_full(space) == "/tmp is full (0 B free of 20 GiB)");
  space.total_inodes = 100;
  CHECK(describe_full(space) == "/tmp is full (no free inodes; 0 B free of 20 GiB)");
}
