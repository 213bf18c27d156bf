#include "step/step_trace.hpp"

#include "trace/trace_channel.hpp"
#include "trace/trace_line.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <algorithm>
#include <iterator>

#include <fcntl.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr std::string_view k_never_read_prefixes[] = {"/proc/", "/dev/", "/sys/"};

bool is_never_read(std::string_view path)
{
  return std::any_of(std::begin(k_never_read_prefixes), std::end(k_never_read_prefixes),
                     [&](std::string_view prefix) { return path.starts_with(prefix); });
}

}  // namespace

TraceSink::TraceSink(const Environment& env)
  : m_socket(env_value(env, k_trace_socket_variable)),
    m_file(env_value(env, std::string(k_trace_file_variable)))
{}

bool TraceSink::send(std::string_view lines) const
{
  if (!m_socket.empty()) {
    return send_trace_datagram(m_socket, lines);
  }
  if (!m_file.empty()) {
    const int fd = ::open(m_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    const bool written = fd >= 0 && write_fully(fd, lines);
    if (fd >= 0) {
      ::close(fd);
    }
    return written;
  }
  return true;
}

std::string process_lines(const Step& step)
{
  std::string lines =
    format_trace_line(process_line(::getpid(), ::getppid(), step.pass, step.tool_exe));
  const std::string invoked = absolute_path(step.tool, step.cwd);
  if (invoked != step.tool_exe) {
    lines += format_trace_line(invoked_line(::getpid(), invoked));
  }
  return lines;
}

std::string served_lines(const Step& step, const StepEntry& entry,
                         const std::vector<std::string>& written, std::int64_t now_ns)
{
  std::string lines = process_lines(step);
  // The step ran no tool: its times say so ("served"), for the compile's per-pass split.
  const int pid = ::getpid();
  lines += format_trace_line(times_line(pid, step.started_ns, now_ns, true));
  for (const auto& read : entry.reads) {
    lines += format_trace_line(access_line(AccessKind::read, pid, read.path));
  }
  for (const auto& path : entry.missing) {
    lines += format_trace_line(access_line(AccessKind::missing, pid, path));
  }
  for (const auto& path : written) {
    lines += format_trace_line(access_line(AccessKind::write, pid, path));
  }
  return lines;
}

void forward_trace(const TraceSink& sink, const Step& step, std::string_view trace)
{
  sink.send(process_lines(step));
  // Whole lines, in datagrams well below the socket's limit; an X line with its I line together.
  constexpr size_t k_chunk = size_t{32} * 1024;
  size_t at = 0;
  while (at < trace.size()) {
    size_t end = std::min(trace.size(), at + k_chunk);
    if (end < trace.size()) {
      const size_t newline = trace.rfind('\n', end - 1);
      end = newline == std::string_view::npos || newline < at ? trace.size() : newline + 1;
      while (end < trace.size() && trace[end] == NVFRESH_TRACE_INVOKED) {
        end = trace.find('\n', end) + 1;
      }
    }
    sink.send(trace.substr(at, end - at));
    at = end;
  }
}

namespace {

// Adds what one line of the tool's trace says it read, looked up or wrote; false when the line
// does not parse or says events were lost.
bool add_access(const std::optional<TraceLine>& line, const Step& step, StepAccesses& accesses,
                std::set<std::string>& written)
{
  if (!line || line->kind == TraceLineKind::lost) {
    return false;
  }
  const auto kind = access_kind_of(line->kind);
  if (!kind) {
    return true;  // its processes and times: the runner speaks for the step
  }
  const std::string path = lexically_normal(line->text);
  if (*kind == AccessKind::write && written.insert(path).second) {
    accesses.written.push_back(path);
  } else if (*kind == AccessKind::read && !is_never_read(path)) {
    accesses.reads.insert(path);
  } else if (*kind == AccessKind::missing && !is_never_read(path) && !has_stem(path, step.temp)) {
    accesses.missing.insert(path);
  }
  return true;
}

}  // namespace

std::optional<StepAccesses> step_accesses(std::string_view trace, const Step& step,
                                          const std::set<std::string>& given_files)
{
  StepAccesses accesses;
  std::set<std::string> written;
  bool complete = true;
  const bool whole = read_trace_lines(trace, [&](const std::optional<TraceLine>& line) {
    complete = complete && add_access(line, step, accesses, written);
  });
  if (!whole || !complete) {
    return std::nullopt;
  }
  for (auto read = accesses.reads.begin(); read != accesses.reads.end();) {
    if (written.contains(*read) || given_files.contains(*read)) {
      read = accesses.reads.erase(read);
    } else if (has_stem(*read, step.temp)) {
      log::info("step not stored: it read {}, a temporary file it was not given", *read);
      return std::nullopt;
    } else {
      ++read;
    }
  }
  return accesses;
}

}  // namespace nvfresh
