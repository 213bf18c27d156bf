// libFuzzer target for lib/record/events.cpp: the build tree's events.log (and events.log.1),
// which every compile appends to and `nvfresh stats` reads (version 2 lines, and version 1 lines of
// older nvfresh). The input is split at the first 0x01 byte into events.log.1 and events.log,
// written to a scratch record root and read back with read_events. Properties: read_events never
// crashes or throws; every event it returns survives format_event_line -> parse_event_line and
// append_event -> read_events unchanged.
// Seeds: tests/fuzz/corpus/events (events.log files of real builds).
#include "fuzz_support.hpp"
#include "record/events.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

namespace {

bool same(const nvfresh::BuildEvent& a, const nvfresh::BuildEvent& b)
{
  return a.time_ns == b.time_ns && a.outcome.kind == b.outcome.kind &&
         a.outcome.cause == b.outcome.cause && a.outcome.detail == b.outcome.detail &&
         a.duration_ns == b.duration_ns && a.object == b.object;
}

void check_round_trip(const std::vector<nvfresh::BuildEvent>& events, const std::string& root)
{
  std::error_code ignored;
  std::filesystem::remove(root + "/events.log", ignored);
  std::filesystem::remove(root + "/events.log.1", ignored);
  for (const nvfresh::BuildEvent& event : events) {
    const std::optional<nvfresh::BuildEvent> line =
      nvfresh::parse_event_line(nvfresh::format_event_line(event));
    if (!line || !same(*line, event)) {
      nvfresh::fuzz::fail("parse_event_line(format_event_line(event)) must equal the event");
    }
    nvfresh::append_event(root, event);
  }
  const std::vector<nvfresh::BuildEvent> again = nvfresh::read_events(root);
  if (again.size() != events.size() ||
      !std::equal(again.begin(), again.end(), events.begin(), same)) {
    nvfresh::fuzz::fail("events read back, appended again and read again are the same events");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text = nvfresh::fuzz::as_text(data, size);
  const std::size_t split = text.find('\x01');
  const nvfresh::fuzz::ScratchDir& dir = nvfresh::fuzz::ScratchDir::get();
  dir.write("events.log.1",
            split == std::string_view::npos ? std::string_view() : text.substr(0, split));
  dir.write("events.log", split == std::string_view::npos ? text : text.substr(split + 1));
  check_round_trip(nvfresh::read_events(dir.path()), dir.path());
  return 0;
}
