#include "record/rotating_log.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

TEST_CASE("a rotating log keeps its lines across one rotation, oldest first", "[rotating_log]")
{
  test::TempDir dir;
  const std::string file = dir.path("logs/a.log");  // its directory is created
  for (int i = 0; i < 10; ++i) {
    append_rotating_line(file, "line " + std::to_string(i) + "\n", 30);
  }
  REQUIRE(std::filesystem::exists(file + ".1"));
  const std::string text = read_rotated_text(file);
  CHECK(text.ends_with("line 9\n"));
  CHECK(text.find("line 0\n") == std::string::npos);  // rotated away twice
  CHECK(read_rotated_text(dir.path("none.log")).empty());
}
