// The registry of build trees nvfresh has worked in on this machine, for `nvfresh space`: one small
// file per tree in the user's state dir ($XDG_STATE_HOME/nvfresh/trees, default
// ~/.local/state/nvfresh/trees). It is written when nvfresh compiles, links or syncs in a tree,
// never by scanning the disk. Grammar at the top of registry.cpp.
//
// A compile pays one stat for it (is the tree's entry there and recent?) and, at most once every
// k_registry_refresh_ns per tree, one small atomic write. The entry file's mtime is the last time
// it was refreshed; `space` takes the last build time from it and from the record root's activity.
#pragma once

#include "util/environment.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

inline constexpr std::int64_t k_registry_refresh_ns = 10LL * 60 * 1'000'000'000;

struct RegistryEntry {
  std::string tree;               // the build tree, absolute
  std::string record_root;        // where its records (and its build lock) are
  std::string source_dir;         // from CMakeCache.txt when the entry was written; "" without one
  std::string file;               // the entry's own file (set by list_registry)
  std::int64_t refreshed_ns = 0;  // the entry file's mtime (set by list_registry)
};

// "$XDG_STATE_HOME/nvfresh/trees", else "$HOME/.local/state/nvfresh/trees", else "" (no registry).
std::string registry_dir(const Environment& env);

std::string registry_file_for(const std::string& registry, const std::string& tree);

std::string serialize_registry_entry(const RegistryEntry& entry);
std::optional<RegistryEntry> parse_registry_entry(const std::string& text, std::string* error);

// Writes the tree's entry when it is missing or older than k_registry_refresh_ns (one stat
// otherwise). Never throws: a registry that cannot be written only leaves `space` uninformed.
void register_tree(const std::string& registry, const std::string& tree,
                   const std::string& record_root, std::int64_t now_ns);

// Every readable entry, in file-name order; files that do not parse are skipped.
std::vector<RegistryEntry> list_registry(const std::string& registry);

void unregister_tree(const RegistryEntry& entry);  // removes its file; no error if absent

}  // namespace nvfresh
