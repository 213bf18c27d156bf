// What `nvfresh space` reports about each registered build tree, and the rule `--clean` applies:
// a tree is removed only when it is regenerable (space/cmake_cache.hpp), idle (its build lock is
// free, no process uses it: space/process_use.hpp, and nothing happened there for
// k_recent_activity_ns), older than the given age, owned by the user running it, wholly on one
// file system, readable, holds neither the user's home nor the directory `space` runs in, nor
// another registered tree or its source dir, nor anything a build does not make
// (space/tree_contents.hpp). What was not looked at keeps the tree.
#pragma once

#include "space/build_lock.hpp"
#include "space/cmake_cache.hpp"
#include "space/registry.hpp"
#include "space/tree_size.hpp"
#include "util/disk_space.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

inline constexpr std::int64_t k_recent_activity_ns = 15LL * 60 * 1'000'000'000;
inline constexpr std::int64_t k_day_ns = 24LL * 3600 * 1'000'000'000;

struct TreeReport {
  RegistryEntry entry;
  bool exists = false;
  std::string real_path;        // entry.tree with every symlink resolved: what --clean would remove
  std::string real_path_error;  // why it could not be resolved (real_path "": the tree is kept)
  unsigned owner_uid = 0;
  TreeOrigin origin;
  LockState lock = LockState::no_lock_file;
  std::int64_t last_build_ns = 0;  // the newest of: registry refresh, events log, records
  TreeSize size;
  TreeSize records;  // the record root's size (inside or outside the tree)
  FileSystemSpace file_system;
  // nullopt: not looked at (the tree is kept); "": nothing found; else what was found.
  std::optional<std::string> process_use;      // a process using the tree
  std::optional<std::string> foreign_content;  // what it holds that no build makes
};

// The newest activity nvfresh left in a tree: the registry entry's refresh, the events log (every
// compile and skip appends to it) and the records directory (every record written renames into it).
std::int64_t last_build_ns(const RegistryEntry& entry);

// Everything but the sizes (no walk): cheap, one tree at a time.
TreeReport examine_tree(const RegistryEntry& entry);

enum class Activity { running, recent, idle };
Activity activity_of(const TreeReport& report, std::int64_t now_ns);

// A registered tree and its source dir, canonical (the source dir "" when unknown).
struct RegisteredTree {
  std::string tree;
  std::string source_dir;
};

struct CleanRule {
  double older_than_days = 0;
  std::int64_t now_ns = 0;
  unsigned uid = 0;  // the user running `space`
  std::vector<std::string>
    must_survive;  // canonical dirs no removal may take along ($HOME, the cwd)
  std::vector<RegisteredTree> registered;  // every registered tree, the one judged included
};

// "" when --clean may remove the tree, else why it stays. Looks only at the report (no file system).
std::string reason_to_keep(const TreeReport& report, const CleanRule& rule);

// nvfresh's own footprint on disk: one line per store ("records" per tree, the registry, and
// later the object cache).
struct FootprintEntry {
  std::string store;
  std::string path;
  std::uint64_t bytes = 0;
};

std::vector<FootprintEntry> footprint(const std::vector<TreeReport>& trees,
                                      const std::string& registry);

// "3 days", "5 hours", "12 minutes", "just now".
std::string describe_age(std::int64_t age_ns);

}  // namespace nvfresh
