#include "doctor/build_tool.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("build tool versions from --version", "[build_tool]")
{
  CHECK(parse_tool_version("1.11.1\n")->parts == std::vector<int>{1, 11, 1});
  CHECK(parse_tool_version("GNU Make 4.3\nBuilt for x86_64-pc-linux-gnu\n")->text == "4.3");
  CHECK(parse_tool_version("1.12.0.git\n")->text == "1.12.0");
  CHECK_FALSE(parse_tool_version("ninja: unknown\n"));
  CHECK_FALSE(parse_tool_version("version 7\n"));
}

TEST_CASE("ninja 1.7 or newer; GNU make", "[build_tool]")
{
  CHECK(judge_build_tool("ninja", "/usr/bin/ninja", "1.11.1\n").ok);
  CHECK(judge_build_tool("ninja", "/usr/bin/ninja", "1.7.0\n").ok);
  auto old = judge_build_tool("ninja", "/opt/ninja", "1.6.0\n");
  CHECK_FALSE(old.ok);
  CHECK(old.finding.find("ninja 1.6.0 (/opt/ninja) is older than 1.7") == 0);
  CHECK(judge_build_tool("make", "/usr/bin/gmake", "GNU Make 4.3\n").ok);
  CHECK_FALSE(judge_build_tool("make", "/usr/bin/bmake", "bmake 20200710\n").ok);
  auto missing = judge_build_tool("ninja", "/nowhere/ninja", std::nullopt);
  CHECK_FALSE(missing.ok);
  CHECK(missing.finding == "/nowhere/ninja --version could not be run");
}
