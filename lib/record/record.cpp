// The record's model: input roles, passes, history, probes (record.hpp). Its text: the grammar in
// record_format.hpp, written by record_write.cpp, read by record_parse.cpp.
#include "record/record.hpp"

#include "record/record_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace nvfresh {

using record_format::k_role_names;

std::string join_passes(const std::vector<std::string>& passes)
{
  return passes.empty() ? std::string("-") : fmt::format("{}", fmt::join(passes, ","));
}

std::vector<std::string> split_passes(const std::string& text)
{
  std::vector<std::string> passes;
  if (text == "-") {
    return passes;
  }
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = std::min(text.find(',', begin), text.size());
    passes.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return passes;
}

std::optional<InputRole> role_from_name(std::string_view name)
{
  for (const auto& entry : k_role_names) {
    if (entry.name == name) {
      return entry.role;
    }
  }
  return std::nullopt;
}

std::string_view role_name(InputRole role)
{
  for (const auto& entry : k_role_names) {
    if (entry.role == role) {
      return entry.name;
    }
  }
  return "header";
}

void add_history(Record& record, HistoryEntry entry)
{
  add_history(record.history, std::move(entry));
}

void add_history(std::vector<HistoryEntry>& history, HistoryEntry entry)
{
  history.push_back(std::move(entry));
  if (history.size() > k_record_history_limit) {
    history.erase(history.begin(),
                  history.end() - static_cast<std::ptrdiff_t>(k_record_history_limit));
  }
}

std::string_view probe_directory(std::string_view probe)
{
  const size_t slash = probe.rfind('/');
  if (probe.empty() || probe.front() != '/' || slash == std::string_view::npos ||
      slash + 1 == probe.size()) {
    return {};
  }
  return slash == 0 ? std::string_view("/") : probe.substr(0, slash);
}

std::vector<ProbeGroup> group_probes(const std::vector<std::string>& paths)
{
  // Probes come mostly in runs of one directory (a manifest's are sorted): a run after the first
  // of its directory's probes takes the group it is in without a look-up in the map.
  std::map<std::string_view, std::vector<std::string>> by_dir;
  std::string_view last_dir;
  std::vector<std::string>* last_names = nullptr;
  for (const auto& path : paths) {
    const std::string_view dir = probe_directory(path);
    if (last_names == nullptr || dir != last_dir) {
      last_dir = dir;
      last_names = &by_dir[dir];
    }
    if (dir.empty()) {
      last_names->push_back(path);
    } else {
      last_names->emplace_back(std::string_view(path).substr(path.rfind('/') + 1));
    }
  }
  std::vector<ProbeGroup> groups;
  groups.reserve(by_dir.size());
  for (auto& [dir, names] : by_dir) {
    groups.push_back({std::string(dir), std::move(names), {}});
  }
  return groups;
}

std::string probe_path(const ProbeGroup& group, std::string_view name)
{
  if (group.dir.empty()) {
    return std::string(name);
  }
  std::string path;
  path.reserve(group.dir.size() + 1 + name.size());
  path += group.dir;
  if (group.dir != "/") {
    path += '/';
  }
  path += name;
  return path;
}

std::vector<std::string> probe_paths(const std::vector<ProbeGroup>& probes)
{
  std::vector<std::string> paths;
  paths.reserve(probe_count(probes));
  for (const auto& group : probes) {
    for (const auto& name : group.names) {
      paths.push_back(probe_path(group, name));
    }
  }
  return paths;
}

size_t probe_count(const std::vector<ProbeGroup>& probes)
{
  size_t count = 0;
  for (const auto& group : probes) {
    count += group.names.size();
  }
  return count;
}

void apply_record_note(Record& record, std::string_view text_checksum, const RecordNote& note)
{
  if (!note.base.empty() && note.base == text_checksum) {
    record.output = note.output;
    record.history = note.history;
  }
}

}  // namespace nvfresh
