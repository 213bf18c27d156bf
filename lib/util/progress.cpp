#include "util/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include <unistd.h>

namespace nvfresh {

ProgressFacts progress_facts(bool json_output)
{
  const char* term = std::getenv("TERM");
  return {::isatty(STDERR_FILENO) != 0, term != nullptr ? term : "", json_output};
}

bool progress_wanted(const ProgressFacts& facts)
{
  return facts.stderr_is_terminal && facts.term != "dumb" && !facts.json_output;
}

std::string format_progress_duration(double seconds)
{
  const auto whole = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  if (whole < 60) {
    return fmt::format("{} s", whole);
  }
  if (whole < 3600) {
    return fmt::format("{} min {} s", whole / 60, whole % 60);
  }
  return fmt::format("{} h {:02} min", whole / 3600, whole % 3600 / 60);
}

std::string format_progress_line(std::string_view label, std::size_t done, std::size_t total,
                                 double elapsed_seconds, std::string_view detail)
{
  std::string line = fmt::format("{}: {}/{}", label, done, total);
  if (done > 0 && elapsed_seconds > 0) {
    const double rate = static_cast<double>(done) / elapsed_seconds;
    line += fmt::format(", {:.1f}/s", rate);
  }
  line += ", " + format_progress_duration(elapsed_seconds);
  if (done > 0 && done < total && elapsed_seconds > 0) {
    const double left =
      elapsed_seconds / static_cast<double>(done) * static_cast<double>(total - done);
    line += ", about " + format_progress_duration(left) + " left";
  }
  line += detail;
  return line;
}

ProgressLine::ProgressLine(std::string label, bool enabled, std::FILE* stream)
  : m_label(std::move(label)), m_enabled(enabled), m_stream(stream), m_start(Clock::now())
{}

ProgressLine::~ProgressLine()
{
  try {
    clear();
  } catch (...) {  // stderr cannot be written: there is no line to clear
  }
}

void ProgressLine::update(std::size_t done, std::size_t total, std::string_view detail)
{
  update_at(done, total, detail, Clock::now());
}

void ProgressLine::update_at(std::size_t done, std::size_t total, std::string_view detail,
                             Clock::time_point now)
{
  std::lock_guard lock(m_mutex);
  if (!m_enabled) {
    return;
  }
  const bool last = done >= total;
  if (m_redraws > 0 && !last && now - m_last_redraw < k_min_redraw_interval) {
    return;
  }
  m_last_redraw = now;
  ++m_redraws;
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  fmt::print(m_stream, "\r\033[K{}", format_progress_line(m_label, done, total, elapsed, detail));
  std::fflush(m_stream);
  m_shown = true;
}

void ProgressLine::clear_line()
{
  std::lock_guard lock(m_mutex);
  if (m_enabled && m_shown) {
    fmt::print(m_stream, "\r\033[K");
    std::fflush(m_stream);
    m_shown = false;
  }
}

void ProgressLine::clear()
{
  std::lock_guard lock(m_mutex);
  if (m_enabled && m_shown) {
    fmt::print(m_stream, "\r\033[K");
    std::fflush(m_stream);
  }
  m_shown = false;
  m_enabled = false;
}

}  // namespace nvfresh
