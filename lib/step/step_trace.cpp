#include "step/step_trace.hpp"

#include "trace/trace_channel.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

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
    fmt::format("X {} {} {} {}\n", ::getpid(), ::getppid(), step.pass, step.tool_exe);
  const std::string invoked = absolute_path(step.tool, step.cwd);
  if (invoked != step.tool_exe) {
    lines += fmt::format("I {} {}\n", ::getpid(), invoked);
  }
  return lines;
}

std::string served_lines(const Step& step, const StepEntry& entry,
                         const std::vector<std::string>& written, std::int64_t now_ns)
{
  std::string lines = process_lines(step);
  // The step ran no tool: its times say so ("served"), for the compile's per-pass split.
  lines += fmt::format("T {} {} {} served\n", ::getpid(), step.started_ns, now_ns);
  for (const auto& read : entry.reads) {
    lines += fmt::format("R {} {}\n", ::getpid(), read.path);
  }
  for (const auto& path : entry.missing) {
    lines += fmt::format("M {} {}\n", ::getpid(), path);
  }
  for (const auto& path : written) {
    lines += fmt::format("W {} {}\n", ::getpid(), path);
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
      while (end < trace.size() && trace.substr(end).starts_with("I ")) {
        end = trace.find('\n', end) + 1;
      }
    }
    sink.send(trace.substr(at, end - at));
    at = end;
  }
}

std::optional<StepAccesses> step_accesses(std::string_view trace, const Step& step,
                                          const std::set<std::string>& given_files)
{
  StepAccesses accesses;
  std::set<std::string> written;
  size_t at = 0;
  while (at < trace.size()) {
    size_t end = trace.find('\n', at);
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    std::string_view line = trace.substr(at, end - at);
    at = end + 1;
    const size_t pid_end = line.find(' ', 2);
    if (line.size() < 2 || pid_end == std::string_view::npos) {
      return std::nullopt;
    }
    const char kind = line[0];
    const std::string path = lexically_normal(std::string(line.substr(pid_end + 1)));
    if (kind == 'L') {
      return std::nullopt;
    }
    if (kind == 'W' && written.insert(path).second) {
      accesses.written.push_back(path);
    } else if (kind == 'R' && !is_never_read(path)) {
      accesses.reads.insert(path);
    } else if (kind == 'M' && !is_never_read(path) && !has_stem(path, step.temp)) {
      accesses.missing.insert(path);
    }
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
