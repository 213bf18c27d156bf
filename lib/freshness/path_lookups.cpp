#include "freshness/path_lookups.hpp"

#include "util/file_io.hpp"
#include "util/process.hpp"

#include <optional>
#include <set>
#include <string_view>

namespace nvfresh {

namespace {

// PATH's directories as absolute, normalized paths, the way the trace names the files in them.
std::vector<std::string> path_directories(const std::string& path, const std::string& working_dir)
{
  std::vector<std::string> dirs;
  for (const std::string& entry : search_path_entries(path)) {
    dirs.push_back(lexically_normal(absolute_path(entry.empty() ? "." : entry, working_dir)));
  }
  return dirs;
}

std::string join(const std::string& dir, const std::string& name)
{
  return dir == "/" ? "/" + name : dir + "/" + name;
}

}  // namespace

std::vector<PathLookup> path_lookups_of(const Record& record)
{
  auto path = record.env.find("PATH");
  if (path == record.env.end()) {
    return {};
  }
  const std::vector<std::string> dirs = path_directories(path->second, record.working_dir);
  const std::set<std::string, std::less<>> dir_set(dirs.begin(), dirs.end());
  // Only files directly inside a PATH directory can be a lookup's candidate: the thousand headers
  // of a CUTLASS TU are left out before anything is copied (this ran on every skip).
  auto name_in_path_dir = [&](std::string_view file) -> std::optional<std::string_view> {
    const size_t slash = file.rfind('/');
    if (slash == std::string_view::npos ||
        !dir_set.contains(slash == 0 ? std::string_view("/") : file.substr(0, slash))) {
      return std::nullopt;
    }
    return file.substr(slash + 1);
  };
  // Candidate names: anything looked up or found directly inside a PATH directory.
  std::set<std::string, std::less<>> missing;
  std::set<std::string, std::less<>> found;
  std::set<std::string, std::less<>> tools;
  std::set<std::string, std::less<>> names;
  for (const auto& group : record.probes) {
    if (group.dir.empty() || !dir_set.contains(group.dir)) {
      continue;
    }
    for (const auto& name : group.names) {
      missing.insert(probe_path(group, name));
      names.emplace(name);
    }
  }
  for (const auto& input : record.inputs) {
    if (auto name = name_in_path_dir(input.file.path)) {
      found.insert(input.file.path);
      names.emplace(*name);
      if (input.role == InputRole::tool) {
        tools.insert(input.file.path);
      }
    }
  }
  std::vector<PathLookup> lookups;
  for (const auto& name : names) {
    std::string resolved;
    bool walked = true;  // every directory before the resolving one was searched
    for (const auto& dir : dirs) {
      const std::string candidate = join(dir, name);
      if (found.count(candidate) != 0) {
        resolved = candidate;
        break;
      }
      if (missing.count(candidate) == 0) {
        walked = false;
        break;
      }
    }
    if (walked) {
      // Found and not run: a data file found along PATH (nvcc.profile). Found nowhere: a program.
      lookups.push_back({name, resolved, resolved.empty() || tools.count(resolved) != 0});
    }
  }
  return lookups;
}

std::string resolve_in_path(const std::string& name, const std::string& path,
                            const std::string& working_dir, bool program)
{
  for (const auto& dir : path_directories(path, working_dir)) {
    std::string candidate = join(dir, name);
    if (program ? is_executable_file(candidate) : stat_file(candidate).is_regular) {
      return candidate;
    }
  }
  return {};
}

}  // namespace nvfresh
