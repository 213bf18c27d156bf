#include "record/step_events.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

StepEvent step(std::int64_t time, const std::string& object, const std::string& run,
               const std::string& pass, OutcomeKind kind)
{
  const Cause cause = kind == OutcomeKind::served ? Cause::cache_hit : Cause::step_not_cached;
  return {time, {kind, cause, "entry\t1f"},       7, object, run,
          pass, pass[0] == 's' ? "ptxas" : "cicc"};
}

}  // namespace

TEST_CASE("step events are appended and read back with their outcome", "[step_events]")
{
  test::TempDir dir;
  const std::string root = dir.path(".nvfresh");
  append_step_event(root, step(1, "/b/k.o", "r1", "compute_80", OutcomeKind::compiled));
  append_step_event(root, step(2, "/b/k.o", "r1", "sm_80", OutcomeKind::served));
  auto events = read_step_events(root);
  REQUIRE(events.size() == 2);
  CHECK(events[0].outcome.kind == OutcomeKind::compiled);
  CHECK(events[0].outcome.cause == Cause::step_not_cached);
  CHECK(events[0].tool == "cicc");
  CHECK(events[1].outcome.kind == OutcomeKind::served);
  CHECK(events[1].outcome.detail == "entry\t1f");
  CHECK(events[1].pass == "sm_80");
  CHECK(events[1].run == "r1");
  CHECK(events[1].duration_ns == 7);
}

TEST_CASE("a steps line of another form is skipped", "[step_events]")
{
  const std::string good =
    format_step_event_line(step(1, "/b/k.o", "r", "sm_90", OutcomeKind::served));
  CHECK(parse_step_event_line(good));
  CHECK_FALSE(parse_step_event_line("s2" + good.substr(2)));
  CHECK_FALSE(parse_step_event_line(good.substr(0, good.size() / 2)));
  CHECK_FALSE(parse_step_event_line("1\tcompiled\tnone\t7\t/b/a.o\tx"));  // an events.log line
}

TEST_CASE("a pass tag names its arch", "[step_events]")
{
  CHECK(arch_of_pass("compute_80") == "80");
  CHECK(arch_of_pass("sm_90a") == "90a");
  CHECK(arch_of_pass("-") == "-");
}

TEST_CASE("an object's last run is the run of its newest step", "[step_events]")
{
  const std::vector<StepEvent> events = {
    step(1, "/b/k.o", "r1", "compute_80", OutcomeKind::compiled),
    step(2, "/b/other.o", "r2", "compute_80", OutcomeKind::compiled),
    step(3, "/b/k.o", "r3", "compute_80", OutcomeKind::served),
    step(4, "/b/k.o", "r3", "sm_80", OutcomeKind::served),
  };
  auto last = last_run_steps(events, "/b/k.o");
  REQUIRE(last.size() == 2);
  CHECK(last[0].time_ns == 3);
  CHECK(last[1].time_ns == 4);
  CHECK(last_run_steps(events, "/b/none.o").empty());
}
