// A registry entry (one file per build tree, "<tree's name>-<hash of its path>.tree"):
//   entry  := "nvfresh-tree" TAB "1" LF field*
//   field  := key TAB value LF                 value escaped as in util/text_fields.hpp
//   key    := "tree" | "records" | "source"     the build tree, its record root, its source dir
// "tree" and "records" are required and absolute. Other keys are skipped (a later version may add
// some). The file's mtime is when the entry was last refreshed; it holds no time of its own.
#include "space/registry.hpp"

#include "space/cmake_cache.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"
#include "util/log.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <unistd.h>

namespace nvfresh {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_header = "nvfresh-tree\t1";
constexpr const char* k_suffix = ".tree";
constexpr std::uint64_t k_max_entry_bytes = std::uint64_t{64} * 1024;

std::optional<RegistryEntry> entry_from_fields(const std::map<std::string, std::string>& fields,
                                               std::string* error)
{
  RegistryEntry entry;
  auto field = [&](const char* key) {
    auto found = fields.find(key);
    return found != fields.end() ? found->second : std::string();
  };
  entry.tree = field("tree");
  entry.record_root = field("records");
  entry.source_dir = field("source");
  if (entry.tree.empty() || entry.tree[0] != '/' || entry.record_root.empty() ||
      entry.record_root[0] != '/') {
    *error = "no absolute tree and records paths";
    return std::nullopt;
  }
  return entry;
}

}  // namespace

std::string registry_dir(const Environment& env)
{
  const std::string base = xdg_base_dir(env, "XDG_STATE_HOME", ".local/state");
  return base.empty() ? base : base + "/nvfresh/trees";
}

std::string registry_file_for(const std::string& registry, const std::string& tree)
{
  std::string name = fs::path(tree).filename().string();
  std::replace_if(
    name.begin(), name.end(), [](char c) { return c == '\n' || c == '\t'; }, '_');
  return fmt::format("{}/{}-{}{}", registry, name.empty() ? "root" : name,
                     hash_bytes(tree).to_hex().substr(0, 16), k_suffix);
}

std::string serialize_registry_entry(const RegistryEntry& entry)
{
  return fmt::format("{}\ntree\t{}\nrecords\t{}\nsource\t{}\n", k_header, escape_field(entry.tree),
                     escape_field(entry.record_root), escape_field(entry.source_dir));
}

std::optional<RegistryEntry> parse_registry_entry(const std::string& text, std::string* error)
{
  std::string_view rest = text;
  std::map<std::string, std::string> fields;
  bool header = true;
  while (!rest.empty()) {
    size_t end = std::min(rest.find('\n'), rest.size());
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (header) {
      if (line != k_header) {
        *error = "not an nvfresh registry entry of version 1";
        return std::nullopt;
      }
      header = false;
      continue;
    }
    auto parts = split_fields(line);
    if (!parts || parts->size() != 2) {
      *error = fmt::format("malformed line '{}'", line);
      return std::nullopt;
    }
    fields[(*parts)[0]] = (*parts)[1];
  }
  if (header) {
    *error = "empty";
    return std::nullopt;
  }
  return entry_from_fields(fields, error);
}

void register_tree(const std::string& registry, const std::string& tree,
                   const std::string& record_root, std::int64_t now_ns)
{
  if (registry.empty()) {
    return;
  }
  const std::string file = registry_file_for(registry, tree);
  FileStat st = stat_file(file);
  if (st.is_regular && now_ns - st.mtime_ns < k_registry_refresh_ns && st.mtime_ns <= now_ns) {
    return;
  }
  RegistryEntry entry{tree, record_root, "", "", 0};
  if (auto cache = read_cmake_cache(tree)) {
    entry.source_dir = cache->home_directory;
  }
  try {
    make_directories(registry);
    write_file_atomically(file, serialize_registry_entry(entry));
  } catch (const std::exception& error) {
    log::info("build tree {} not registered: {}", tree, error.what());
  }
}

std::vector<RegistryEntry> list_registry(const std::string& registry)
{
  std::vector<RegistryEntry> entries;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(registry, error)) {
    const std::string file = item.path().string();
    FileStat st = stat_file(file);
    if (item.path().extension() != k_suffix || !st.is_regular || st.size > k_max_entry_bytes) {
      continue;
    }
    std::string why;
    auto text = try_read_file(file);
    auto entry = text ? parse_registry_entry(*text, &why) : std::nullopt;
    if (!entry) {
      log::info("registry entry {} skipped: {}", file, text ? why : "unreadable");
      continue;
    }
    entry->file = file;
    entry->refreshed_ns = st.mtime_ns;
    entries.push_back(std::move(*entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.file < b.file; });
  return entries;
}

void unregister_tree(const RegistryEntry& entry)
{
  if (!entry.file.empty()) {
    ::unlink(entry.file.c_str());
  }
}

}  // namespace nvfresh
