#include "space/process_use.hpp"

#include "util/file_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <dirent.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr std::string_view k_deleted_suffix = " (deleted)";

struct ProcessLink {
  const char* name;  // under /proc/<pid>
  const char* how;
};

constexpr std::array<ProcessLink, 3> k_process_links{{
  {"cwd", "has its working directory"},
  {"root", "has its root directory"},
  {"exe", "runs"},
}};

std::string read_link(const std::string& link)
{
  std::array<char, 4096> buffer{};
  ssize_t length = ::readlink(link.c_str(), buffer.data(), buffer.size());
  if (length <= 0 || static_cast<size_t>(length) >= buffer.size()) {
    return {};
  }
  std::string target(buffer.data(), static_cast<size_t>(length));
  if (target.size() > k_deleted_suffix.size() &&
      target.compare(target.size() - k_deleted_suffix.size(), k_deleted_suffix.size(),
                     k_deleted_suffix) == 0) {
    target.resize(target.size() - k_deleted_suffix.size());
  }
  return target.empty() || target[0] != '/' ? std::string() : target;  // "socket:[…]", "pipe:[…]"
}

std::vector<std::string> directory_names(const std::string& dir, bool* readable = nullptr)
{
  std::vector<std::string> names;
  DIR* handle = ::opendir(dir.c_str());
  if (readable != nullptr) {
    *readable = handle != nullptr;
  }
  if (handle == nullptr) {
    return names;
  }
  while (const dirent* item = ::readdir(handle)) {
    names.emplace_back(item->d_name);
  }
  ::closedir(handle);
  return names;
}

bool is_number(const std::string& name)
{
  return !name.empty() && name.size() < 10 &&
         std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c) != 0; });
}

void add_process(const std::string& dir, int pid, ProcessSnapshot& snapshot)
{
  std::string command = try_read_file(dir + "/comm").value_or("?");
  while (!command.empty() && command.back() == '\n') {
    command.pop_back();
  }
  auto add = [&](const std::string& link, const std::string& how) {
    if (std::string target = read_link(link); !target.empty()) {
      snapshot.paths.push_back({pid, command, std::move(target), how});
    }
  };
  for (const auto& link : k_process_links) {
    add(dir + "/" + link.name, link.how);
  }
  for (const auto& fd : directory_names(dir + "/fd")) {
    if (is_number(fd)) {
      add(fmt::format("{}/fd/{}", dir, fd), "has open");
    }
  }
}

}  // namespace

ProcessSnapshot snapshot_process_paths(const std::string& proc)
{
  ProcessSnapshot snapshot;
  const int self = static_cast<int>(::getpid());
  for (const auto& name : directory_names(proc, &snapshot.readable)) {
    if (is_number(name) && std::stoi(name) != self) {
      add_process(fmt::format("{}/{}", proc, name), std::stoi(name), snapshot);
    }
  }
  return snapshot;
}

std::string process_using(const ProcessSnapshot& snapshot, const std::string& dir)
{
  if (!snapshot.readable) {
    return "the processes that may use it cannot be listed (/proc cannot be read)";
  }
  for (const auto& use : snapshot.paths) {
    if (is_within(use.path, dir)) {
      return fmt::format("process {} ({}) {} there ({})", use.pid, use.command, use.how, use.path);
    }
  }
  return {};
}

}  // namespace nvfresh
