#include "util/build_invocation.hpp"

#include "util/file_io.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <sstream>
#include <string_view>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace nvfresh {

namespace {

struct ProcessInfo {
  std::string name;
  long parent = 0;
  std::string start_ticks;
};

// /proc/<pid>/stat: "pid (comm) state ppid ... starttime(22) ..."; comm may hold spaces and ')'.
std::optional<ProcessInfo> process_info(long pid)
{
  auto text = try_read_file(fmt::format("/proc/{}/stat", pid), 4096);
  if (!text) {
    return std::nullopt;
  }
  const size_t open = text->find('(');
  const size_t close = text->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return std::nullopt;
  }
  ProcessInfo info;
  info.name = text->substr(open + 1, close - open - 1);
  std::istringstream fields(text->substr(close + 1));
  std::string field;
  for (int index = 3; fields >> field; ++index) {  // field 3 is the state
    if (index == 4) {
      info.parent = std::strtol(field.c_str(), nullptr, 10);
    } else if (index == 22) {
      info.start_ticks = field;
      return info;
    }
  }
  return std::nullopt;
}

bool is_build_tool(std::string_view name)
{
  constexpr std::array<std::string_view, 7> k_tools = {"ninja", "make",  "gmake", "cmake",
                                                       "samu",  "bazel", "scons"};
  for (std::string_view tool : k_tools) {
    if (name == tool) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string build_invocation_id()
{
  long pid = getppid();
  for (int depth = 0; pid > 1 && depth < 32; ++depth) {
    auto info = process_info(pid);
    if (!info) {
      break;
    }
    if (is_build_tool(info->name)) {
      return fmt::format("{} {} {}", info->name, pid, info->start_ticks);
    }
    pid = info->parent;
  }
  return fmt::format("session {}", getsid(0));
}

bool first_time_this_build(const std::string& marker_file)
{
  return first_time_this_build(marker_file, build_invocation_id());
}

bool first_time_this_build(const std::string& marker_file, const std::string& build_id)
{
  const std::string id = build_id + "\n";
  const int fd = open(marker_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return true;
  }
  bool first = true;
  if (flock(fd, LOCK_EX) == 0) {
    std::array<char, 256> buffer{};
    const ssize_t got = pread(fd, buffer.data(), buffer.size(), 0);
    first = got < 0 || std::string_view(buffer.data(), static_cast<size_t>(got)) != id;
    if (first && ftruncate(fd, 0) == 0) {
      (void)!pwrite(fd, id.data(), id.size(), 0);
    }
  }
  close(fd);
  return first;
}

bool already_this_build(const std::string& marker_file)
{
  return already_this_build(marker_file, build_invocation_id());
}

bool already_this_build(const std::string& marker_file, const std::string& build_id)
{
  const int fd = open(marker_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  const std::string id = build_id + "\n";
  std::array<char, 256> buffer{};
  const ssize_t got = pread(fd, buffer.data(), buffer.size(), 0);
  close(fd);
  return got >= 0 && std::string_view(buffer.data(), static_cast<size_t>(got)) == id;
}

}  // namespace nvfresh
