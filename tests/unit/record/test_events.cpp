#include "record/events.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

BuildEvent compiled(std::int64_t time, const std::string& object, const std::string& detail)
{
  return {time, {OutcomeKind::compiled, Cause::input_changed, detail}, 10, object};
}

}  // namespace

TEST_CASE("events are appended and read back in order, with kind, cause and detail", "[events]")
{
  test::TempDir dir;
  append_event(dir.path(".nvfresh"), compiled(1, "/b/a.o", "a.h changed"));
  append_event(dir.path(".nvfresh"), {2,
                                      {OutcomeKind::skipped, Cause::touched_unchanged,
                                       "1 of 3 inputs touched\tcontent unchanged"},
                                      10,
                                      "/b/a.o"});
  append_event(dir.path(".nvfresh"),
               {3, {OutcomeKind::passthrough, Cause::not_a_compile, "--version"}, 0, ""});
  auto events = read_events(dir.path(".nvfresh"));
  REQUIRE(events.size() == 3);
  CHECK(events[0].outcome.kind == OutcomeKind::compiled);
  CHECK(events[0].outcome.cause == Cause::input_changed);
  CHECK(events[1].outcome.detail == "1 of 3 inputs touched\tcontent unchanged");
  CHECK(events[2].outcome.kind == OutcomeKind::passthrough);
  CHECK(events[2].object.empty());
}

TEST_CASE("events lines of the first format are read with an unknown cause", "[events]")
{
  auto event = parse_event_line("5\tnot-recorded\t7\t/b/a.o\tno space left");
  REQUIRE(event);
  CHECK(event->outcome.kind == OutcomeKind::not_recorded);
  CHECK(event->outcome.cause == Cause::unknown);
  CHECK(event->duration_ns == 7);
  CHECK(event->outcome.detail == "no space left");
  CHECK_FALSE(parse_event_line("5\tfrobnicated\tnone\t7\t/b/a.o\tx"));  // unknown kind
  CHECK_FALSE(parse_event_line("5\tcompiled\tno_such_cause\t7\t/b/a.o\tx"));
  CHECK_FALSE(parse_event_line("x\tcompiled\tnone\t7\t/b/a.o\tx"));
  CHECK_FALSE(parse_event_line("5\tcompiled"));
}

TEST_CASE("every outcome kind and cause has a name that reads back", "[events]")
{
  for (int k = 0; k <= static_cast<int>(OutcomeKind::fell_back); ++k) {
    auto kind = static_cast<OutcomeKind>(k);
    CHECK(outcome_from_name(outcome_name(kind)) == kind);
  }
  for (int c = 0; c <= static_cast<int>(Cause::tracer_unusable); ++c) {
    auto cause = static_cast<Cause>(c);
    CAPTURE(c);
    CHECK(cause_from_name(cause_name(cause)) == cause);
    CHECK(describe(cause) != "unknown");
  }
}

TEST_CASE("the events log rotates once past its limit and is read across the rotation", "[events]")
{
  test::TempDir dir;
  const std::string root = dir.path(".nvfresh");
  for (int i = 0; i < 30; ++i) {
    append_event(root, compiled(i, "/b/o" + std::to_string(i) + ".o", "nvcc ran"), 400);
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
