#include "record/events.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

TEST_CASE("events are appended and read back in order", "[events]")
{
  test::TempDir dir;
  append_event(dir.path(".nvfresh"), {1, "compiled", 10, "/b/a.o", "nvcc ran"});
  append_event(dir.path(".nvfresh"),
               {2, "skipped", 10, "/b/a.o", "1 of 3 inputs touched\tcontent unchanged"});
  auto events = read_events(dir.path(".nvfresh"));
  REQUIRE(events.size() == 2);
  CHECK(events[0].event == "compiled");
  CHECK(events[1].reason == "1 of 3 inputs touched\tcontent unchanged");
}

TEST_CASE("the events log rotates once past its limit and is read across the rotation", "[events]")
{
  test::TempDir dir;
  const std::string root = dir.path(".nvfresh");
  for (int i = 0; i < 30; ++i) {
    append_event(root, {i, "compiled", 1, "/b/o" + std::to_string(i) + ".o", "nvcc ran"}, 400);
  }
  CHECK(std::filesystem::file_size(root + "/events.log") <= 400 + 100);
  REQUIRE(std::filesystem::exists(root + "/events.log.1"));
  CHECK(std::filesystem::file_size(root + "/events.log.1") <= 400 + 100);
  auto events = read_events(root);
  REQUIRE_FALSE(events.empty());
  CHECK(events.back().object == "/b/o29.o");  // the newest is kept
  for (size_t i = 1; i < events.size(); ++i) {
    CHECK(events[i - 1].time_ns < events[i].time_ns);  // oldest first, across both files
  }
  CHECK(events.size() < 30);  // older rotations are gone: the log is bounded
}
