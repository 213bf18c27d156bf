#include "doctor/storage_checks.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("records: a directory that can be written, made or not", "[storage_checks]")
{
  test::TempDir dir;
  CHECK(write_problem(dir.path()).empty());
  CHECK(write_problem(dir.path("not/yet/there")).empty());
  auto check = check_record_root(dir.path("records"), "off");
  CHECK(check.ok);
  CHECK(check.finding.find(dir.path("records") + " is writable, ") == 0);
}

TEST_CASE("records: below a regular file nothing can be made", "[storage_checks]")
{
  test::TempDir dir;
  dir.write("file", "x");
  CHECK(write_problem(dir.path("file/records")) == dir.path("file") + " is not a directory, so " +
                                                     dir.path("file/records") + " cannot be made");
  auto check = check_record_root(dir.path("file/records"), "");
  CHECK_FALSE(check.ok);
  CHECK(check.fix.find("NVFRESH_RECORD_DIR") != std::string::npos);
}

TEST_CASE("cache: off, unwritable, below its minimum free space", "[storage_checks]")
{
  test::TempDir dir;
  CHECK(check_cache_dir({false, "", false, 0}).ok);
  CHECK_FALSE(check_cache_dir({true, "", false, 0}).ok);
  dir.write("file", "x");
  auto blocked = check_cache_dir({true, dir.path("file/cache"), false, 0});
  CHECK_FALSE(blocked.ok);
  CHECK(blocked.fix.find("NVFRESH_CACHE_DIR") != std::string::npos);
  auto full = check_cache_dir({true, dir.path("cache"), false, ~std::uint64_t{0}});
  CHECK_FALSE(full.ok);
  CHECK(full.finding.find("below NVFRESH_CACHE_MIN_FREE") != std::string::npos);
  CHECK(check_cache_dir({true, dir.path("cache"), false, 0}).ok);
}
