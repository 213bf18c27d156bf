// Progress of long work (repro's runs, cache verify's entries, report's objects) on one terminal
// line of stderr: redrawn in place with '\r', at most ten times a second, cleared when the work ends.
// Shown only to a person: stderr is a terminal, TERM is not "dumb" and the command does not print
// --json. The line has no colour, so NO_COLOR needs nothing. Never used by the launcher: a build's
// output stays nvcc's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace nvfresh {

// What decides whether a progress line is shown; progress_facts() reads them from the process.
struct ProgressFacts {
  bool stderr_is_terminal = false;
  std::string term;  // $TERM ("" when unset)
  bool json_output = false;
};

ProgressFacts progress_facts(bool json_output);
bool progress_wanted(const ProgressFacts& facts);

// "42 s", "5 min 10 s", "2 h 05 min".
std::string format_progress_duration(double seconds);

// "<label>: 12/60, 2.0/s, 6 s, about 24 s left<detail>": done/total, the rate (items a second, once
// there is one), the time so far and, once something is done, the time left at that rate.
std::string format_progress_line(std::string_view label, std::size_t done, std::size_t total,
                                 double elapsed_seconds, std::string_view detail = {});

// One rewritten line on `stream`, or nothing when disabled. Thread-safe.
class ProgressLine {
public:
  using Clock = std::chrono::steady_clock;

  ProgressLine(std::string label, bool enabled, std::FILE* stream = stderr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ProgressLine(ProgressLine&&) = delete;
  ProgressLine& operator=(ProgressLine&&) = delete;

  // Redraws with `done` of `total` and the detail, unless the last redraw was less than
  // k_min_redraw_interval ago (the final one, done == total, is always drawn).
  void update(std::size_t done, std::size_t total, std::string_view detail = {});
  void update_at(std::size_t done, std::size_t total, std::string_view detail,
                 Clock::time_point now);
  // Erases the line now shown (before printing something else on the terminal); the next update
  // draws it again.
  void clear_line();
  void clear();  // erases the line (once something was drawn); later updates draw nothing
  bool enabled() const { return m_enabled; }
  std::size_t redraws() const { return m_redraws; }

  static constexpr std::chrono::milliseconds k_min_redraw_interval{100};

private:
  std::mutex m_mutex;
  std::string m_label;
  bool m_enabled;
  std::FILE* m_stream;
  Clock::time_point m_start;
  Clock::time_point m_last_redraw{};
  std::size_t m_redraws = 0;
  bool m_shown = false;
};

}  // namespace nvfresh
