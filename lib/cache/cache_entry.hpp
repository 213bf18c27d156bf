// A cache entry: the result of one compile, everything a hit needs to stand in for it: the object,
// the depfile prerequisites, what the compile printed (replayed like a skip, with the same terminal
// rules), the normalized per-component digests, and where and when it was first compiled (with the
// command, so that `nvfresh cache verify` can compile it again). Paths are tree-relative
// (tree_roots.hpp). The grammar is at the top of cache_entry.cpp.
#pragma once

#include "util/environment.hpp"
#include "util/hasher.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct CacheEntry {
  // What binds the file to its place, so that an entry file copied under another key, or whose
  // object was replaced, serves nothing: the keys it was stored under and the digest of its
  // object. A store sets them (CacheStore::write_entry); a read under another key, or of an object
  // whose bytes do not hash to object_digest, is a miss.
  Digest manifest_key;
  Digest result_key;
  Digest object_digest;
  std::string object;                              // the object's bytes
  std::vector<std::string> depfile_prerequisites;  // as written to the build's depfile
  // What the compile printed ("combined": one stream in console_out), and how (record.hpp).
  std::string console_mode = "separate";
  std::string console_out;
  std::string console_err;
  std::string console_terminals;
  std::map<std::string, std::string> console_terminal_env;
  std::map<std::string, Digest> components;  // normalized digests (digest/object_digest.hpp)
  // Every set of digests a verifying recompile saw besides `components` (non-deterministic codegen).
  std::vector<std::map<std::string, Digest>> other_variants;
  std::int64_t created_ns = 0;
  std::int64_t compile_ns = 0;  // how long nvcc took: what a hit saves
  std::string origin_tree;      // the build tree that compiled it first (absolute)
  // The roots its object names (its manifest entry's bound_build_root and bound_source_root), so
  // that restoring the object a record names checks the binding as a lookup does. nullopt in
  // entries written before it: such an entry is not restored, it is looked up.
  struct Binding {
    std::string build_root;
    std::string source_root;
    bool operator==(const Binding&) const = default;
  };
  std::optional<Binding> bound;
  std::string nvcc_version;
  // How to compile it again (cache verify): the command, its working directory and environment,
  // the object's path in the origin tree.
  std::vector<std::string> origin_command;
  std::string origin_cwd;
  Environment origin_env;
  std::string origin_object;
  bool operator==(const CacheEntry&) const = default;
};

constexpr int k_cache_entry_format_version = 2;

std::string serialize_cache_entry(const CacheEntry& entry);
std::optional<CacheEntry> parse_cache_entry(std::string_view text, std::string* error = nullptr);

}  // namespace nvfresh
