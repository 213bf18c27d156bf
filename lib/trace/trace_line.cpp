#include "trace/trace_line.hpp"

#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace nvfresh {

namespace {

constexpr std::string_view k_no_pass = NVFRESH_TRACE_NO_PASS;
constexpr std::string_view k_served = NVFRESH_TRACE_SERVED;

// Splits off the next space-separated word; the rest stays in text.
std::string_view next_word(std::string_view& text)
{
  const size_t space = text.find(' ');
  std::string_view word = text.substr(0, space);
  text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  return word;
}

template <typename Number>
std::optional<Number> number(std::string_view text)
{
  Number value = 0;
  return parse_number(text, value) ? std::optional<Number>(value) : std::nullopt;
}

bool is_absolute(std::string_view path)
{
  return !path.empty() && path.front() == '/';
}

bool sayable(std::string_view text)
{
  return text.find('\n') == std::string_view::npos && text.find('\0') == std::string_view::npos;
}

bool is_access(char letter)
{
  return letter == NVFRESH_TRACE_READ || letter == NVFRESH_TRACE_DIRECTORY ||
         letter == NVFRESH_TRACE_WRITE || letter == NVFRESH_TRACE_MISSING;
}

// "X pid ppid pass exe"
std::optional<TraceLine> parse_process(TraceLine line, std::string_view rest)
{
  auto parent_pid = number<int>(next_word(rest));
  std::string_view pass = next_word(rest);
  if (!parent_pid || pass.empty() || !is_absolute(rest)) {
    return std::nullopt;
  }
  line.parent_pid = *parent_pid;
  line.pass = pass == k_no_pass ? std::string() : std::string(pass);
  line.text = std::string(rest);
  return line;
}

// "T pid start_ns end_ns [served]"
std::optional<TraceLine> parse_times(TraceLine line, std::string_view rest)
{
  auto start = number<std::int64_t>(next_word(rest));
  auto end = number<std::int64_t>(next_word(rest));
  if (!start || !end || *end < *start || (!rest.empty() && rest != k_served)) {
    return std::nullopt;
  }
  line.start_ns = *start;
  line.end_ns = *end;
  line.served = rest == k_served;
  return line;
}

}  // namespace

TraceLine process_line(int pid, int parent_pid, std::string pass, std::string executable)
{
  return {TraceLineKind::process, pid, parent_pid, std::move(pass), std::move(executable)};
}

TraceLine invoked_line(int pid, std::string path)
{
  return {TraceLineKind::invoked, pid, 0, {}, std::move(path)};
}

TraceLine access_line(AccessKind kind, int pid, std::string path)
{
  return {line_kind_of(kind), pid, 0, {}, std::move(path)};
}

TraceLineKind line_kind_of(AccessKind kind)
{
  switch (kind) {
  case AccessKind::read: return TraceLineKind::read;
  case AccessKind::write: return TraceLineKind::write;
  case AccessKind::missing: return TraceLineKind::missing;
  case AccessKind::directory: return TraceLineKind::directory;
  case AccessKind::exec: break;
  }
  throw std::logic_error("an exec is said by an X line, not by an access line");
}

std::optional<AccessKind> access_kind_of(TraceLineKind kind)
{
  switch (kind) {
  case TraceLineKind::read: return AccessKind::read;
  case TraceLineKind::write: return AccessKind::write;
  case TraceLineKind::missing: return AccessKind::missing;
  case TraceLineKind::directory: return AccessKind::directory;
  default: return std::nullopt;
  }
}

TraceLine times_line(int pid, std::int64_t start_ns, std::int64_t end_ns, bool served)
{
  return {TraceLineKind::times, pid, 0, {}, {}, start_ns, end_ns, served};
}

TraceLine lost_line(int pid, std::string reason)
{
  return {TraceLineKind::lost, pid, 0, {}, std::move(reason)};
}

std::string format_trace_line(const TraceLine& line)
{
  const char letter = static_cast<char>(line.kind);
  if (!sayable(line.text) || !sayable(line.pass)) {
    return fmt::format("{} {} {}\n", NVFRESH_TRACE_LOST, line.pid, NVFRESH_TRACE_LOST_PATH);
  }
  switch (line.kind) {
  case TraceLineKind::process:
    return fmt::format("{} {} {} {} {}\n", letter, line.pid, line.parent_pid,
                       line.pass.empty() ? k_no_pass : std::string_view(line.pass), line.text);
  case TraceLineKind::times:
    return fmt::format("{} {} {} {}{}\n", letter, line.pid, line.start_ns, line.end_ns,
                       line.served ? fmt::format(" {}", k_served) : std::string());
  default: return fmt::format("{} {} {}\n", letter, line.pid, line.text);
  }
}

std::optional<TraceLine> parse_trace_line(std::string_view text)
{
  // The tracer writes C strings: a NUL byte is damage (a path with one would name another file).
  if (text.size() < 2 || text[1] != ' ' || text.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  const char letter = text.front();
  std::string_view rest = text.substr(2);
  auto pid = number<int>(next_word(rest));
  if (!pid) {
    return std::nullopt;
  }
  TraceLine line;
  line.kind = static_cast<TraceLineKind>(letter);
  line.pid = *pid;
  if (letter == NVFRESH_TRACE_PROCESS) {
    return parse_process(std::move(line), rest);
  }
  if (letter == NVFRESH_TRACE_TIMES) {
    return parse_times(std::move(line), rest);
  }
  if (letter == NVFRESH_TRACE_LOST) {
    line.text = std::string(rest);
    return line;
  }
  if ((letter == NVFRESH_TRACE_INVOKED || is_access(letter)) && is_absolute(rest)) {
    line.text = std::string(rest);
    return line;
  }
  return std::nullopt;
}

}  // namespace nvfresh
