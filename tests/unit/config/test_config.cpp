#include "config/config.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("defaults need no setting", "[config]")
{
  Config config = load_config({{"HOME", "/nonexistent"}});
  REQUIRE_FALSE(config.disabled);
  REQUIRE(config.record_dir.empty());
  REQUIRE(config.log_file.empty());
}

TEST_CASE("environment variables and the config file", "[config]")
{
  test::TempDir dir;
  auto file = dir.write("nvfresh.conf", "# comment\nrecord_dir = /records\nlog_file=/tmp/x.log\n"
                                        "disable = yes\n");
  Config from_file = load_config({{"NVFRESH_CONFIG", file}});
  REQUIRE(from_file.disabled);
  REQUIRE(from_file.record_dir == "/records");
  REQUIRE(from_file.log_file == "/tmp/x.log");
  REQUIRE(from_file.config_file == file);

  Config env_wins = load_config(
    {{"NVFRESH_CONFIG", file}, {"NVFRESH_RECORD_DIR", "/elsewhere"}, {"NVFRESH_DISABLE", "0"}});
  REQUIRE(env_wins.record_dir == "/elsewhere");
  REQUIRE_FALSE(env_wins.disabled);
}

TEST_CASE("truth values", "[config]")
{
  for (const char* yes : {"1", "true", "TRUE", "yes", "on"}) {
    REQUIRE(is_true(yes));
  }
  for (const char* no : {"0", "false", "no", "off", ""}) {
    REQUIRE_FALSE(is_true(no));
  }
}

TEST_CASE("config: sizes as people write them (NVFRESH_CACHE_MAX_SIZE, _MIN_FREE)", "[config]")
{
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size("512") == 512u);
  CHECK(parse_size("24K") == 24u * 1024);
  CHECK(parse_size("2G") == 2ULL << 30);
  CHECK(parse_size("2GiB") == 2ULL << 30);
  CHECK(parse_size(" 500M ") == 500ULL << 20);
  CHECK(parse_size("1.5G") == (3ULL << 30) / 2);
  CHECK_FALSE(parse_size(""));
  CHECK_FALSE(parse_size("lots"));
  CHECK_FALSE(parse_size("-1G"));
  CHECK(is_false("0"));
  CHECK(is_false("off"));
  CHECK(is_false("No"));
  CHECK_FALSE(is_false("1"));
  CHECK_FALSE(is_false(""));
}

TEST_CASE("the free-space floor comes from NVFRESH_SPACE_FLOOR or space_floor", "[config]")
{
  test::TempDir dir;
  auto file = dir.write("nvfresh.conf", "space_floor = 5GiB\n");
  REQUIRE(load_config({{"HOME", "/nonexistent"}}).space_floor.empty());
  REQUIRE(load_config({{"NVFRESH_CONFIG", file}}).space_floor == "5GiB");
  REQUIRE(load_config({{"NVFRESH_CONFIG", file}, {"NVFRESH_SPACE_FLOOR", "1%"}}).space_floor ==
          "1%");
}

TEST_CASE("a team cache dir is declared by NVFRESH_CACHE_SHARED or cache_shared", "[config]")
{
  test::TempDir dir;
  auto file = dir.write("nvfresh.conf", "cache_shared = yes\n");
  REQUIRE(load_config({{"HOME", "/nonexistent"}}).cache_shared.empty());
  REQUIRE(is_true(load_config({{"NVFRESH_CONFIG", file}}).cache_shared));
  REQUIRE_FALSE(
    is_true(load_config({{"NVFRESH_CONFIG", file}, {"NVFRESH_CACHE_SHARED", "0"}}).cache_shared));
}

TEST_CASE("the remote's budgets come from the environment or the config file", "[config]")
{
  test::TempDir dir;
  auto file = dir.write("nvfresh.conf", "remote_compile_budget = 3\nremote_build_budget = 60\n");
  const Config from_file = load_config({{"NVFRESH_CONFIG", file}});
  CHECK(from_file.remote_compile_budget == "3");
  CHECK(from_file.remote_build_budget == "60");
  const Config env_wins =
    load_config({{"NVFRESH_CONFIG", file}, {"NVFRESH_REMOTE_COMPILE_BUDGET", "1.5"}});
  CHECK(env_wins.remote_compile_budget == "1.5");
}
