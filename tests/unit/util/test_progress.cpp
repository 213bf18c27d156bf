#include "util/progress.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using namespace nvfresh;

namespace {

std::string read_all(std::FILE* stream)
{
  std::fflush(stream);
  std::rewind(stream);
  std::string text;
  for (int c = std::fgetc(stream); c != EOF; c = std::fgetc(stream)) {
    text += static_cast<char>(c);
  }
  return text;
}

}  // namespace

TEST_CASE("progress_wanted: only a terminal, not TERM=dumb, not --json", "[progress]")
{
  CHECK(progress_wanted({true, "xterm-256color", false}));
  CHECK(progress_wanted({true, "", false}));
  CHECK_FALSE(progress_wanted({false, "xterm", false}));
  CHECK_FALSE(progress_wanted({true, "dumb", false}));
  CHECK_FALSE(progress_wanted({true, "xterm", true}));
  CHECK_FALSE(progress_wanted({false, "dumb", true}));
}

TEST_CASE("format_progress_duration: seconds, minutes, hours", "[progress]")
{
  CHECK(format_progress_duration(0) == "0 s");
  CHECK(format_progress_duration(-3) == "0 s");
  CHECK(format_progress_duration(41.6) == "42 s");
  CHECK(format_progress_duration(310) == "5 min 10 s");
  CHECK(format_progress_duration(7500) == "2 h 05 min");
}

TEST_CASE("format_progress_line: done/total, rate, time so far and left", "[progress]")
{
  CHECK(format_progress_line("nvfresh repro", 0, 60, 3) == "nvfresh repro: 0/60, 3 s");
  CHECK(format_progress_line("nvfresh repro", 12, 60, 6, ", 2 variants so far") ==
        "nvfresh repro: 12/60, 2.0/s, 6 s, about 24 s left, 2 variants so far");
  CHECK(format_progress_line("x", 1, 4, 100) == "x: 1/4, 0.0/s, 1 min 40 s, about 5 min 0 s left");
  // done: no time left
  CHECK(format_progress_line("x", 4, 4, 2) == "x: 4/4, 2.0/s, 2 s");
}

TEST_CASE("ProgressLine: redraws at most every 100 ms, the last always, then clears", "[progress]")
{
  std::FILE* stream = std::tmpfile();
  REQUIRE(stream != nullptr);
  {
    ProgressLine line("work", true, stream);
    const auto start = ProgressLine::Clock::now();
    line.update_at(0, 3, "", start);
    line.update_at(1, 3, "", start + std::chrono::milliseconds(50));  // too soon: skipped
    line.update_at(2, 3, "", start + std::chrono::milliseconds(150));
    line.update_at(3, 3, "", start + std::chrono::milliseconds(160));  // the last: drawn
    CHECK(line.redraws() == 3);
  }
  const std::string text = read_all(stream);
  std::fclose(stream);
  CHECK(text.find("work: 0/3") != std::string::npos);
  CHECK(text.find("work: 1/3") == std::string::npos);
  CHECK(text.find("work: 2/3") != std::string::npos);
  CHECK(text.find("work: 3/3") != std::string::npos);
  CHECK(text.substr(0, 4) == "\r\033[K");
  CHECK(text.size() >= 4);
  CHECK(text.substr(text.size() - 4) == "\r\033[K");  // cleared at the end
  CHECK(text.find('\n') == std::string::npos);
}

TEST_CASE("ProgressLine disabled writes nothing", "[progress]")
{
  std::FILE* stream = std::tmpfile();
  REQUIRE(stream != nullptr);
  {
    ProgressLine line("work", false, stream);
    line.update(1, 2);
    line.update(2, 2);
    line.clear();
    CHECK(line.redraws() == 0);
  }
  CHECK(read_all(stream).empty());
  std::fclose(stream);
}

TEST_CASE("ProgressLine: clear_line erases the line shown, the next update draws it again",
          "[progress]")
{
  std::FILE* stream = std::tmpfile();
  REQUIRE(stream != nullptr);
  {
    ProgressLine line("work", true, stream);
    line.clear_line();  // nothing shown: nothing written
    const auto start = ProgressLine::Clock::now();
    line.update_at(1, 4, "", start);
    line.clear_line();
    line.clear_line();  // already erased
    line.update_at(2, 4, "", start + std::chrono::milliseconds(200));
    line.clear();
    line.update_at(4, 4, "", start + std::chrono::milliseconds(400));  // after clear: nothing
  }
  const std::string text = read_all(stream);
  const std::string erase = "\r\033[K";
  const auto first = text.find(erase + "work: 1/4");
  const auto second = text.find(erase + erase + "work: 2/4");  // clear_line's, then the redraw's
  CHECK(first == 0);
  CHECK(second != std::string::npos);
  CHECK(text.find("4/4") == std::string::npos);
  CHECK(text.substr(text.size() - erase.size()) == erase);
  CHECK(text.find(erase + erase + erase) == std::string::npos);  // the second clear_line: nothing
  std::fclose(stream);
}
