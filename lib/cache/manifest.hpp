// A cache manifest: for one manifest key (the compile's command signature, toolchain path and source
// content, paths relative to the tree roots: cache_key.hpp), the input sets of the compiles seen
// before, each naming the result it produced. The input set of a compile is known only after it
// ran, so a lookup goes through the manifest, as ccache's direct mode does, but with the traced
// set: an entry whose every input still has its hash, whose every probe still finds nothing, and
// whose PATH lookups still resolve the same, names the result. No `nvcc -E` or `nvcc -M` runs.
// The grammar is at the top of manifest.cpp.
#pragma once

#include "record/record.hpp"
#include "util/hasher.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nvfresh {

// The stat stamp an input had when its entry was stored, with the device (a record's stamps have
// none): a file that has it now holds the entry's content, so a lookup in another build dir of the
// same checkout (the same files, the same inodes) stats it and hashes nothing. All zero: none (the
// file had changed within FileHasher's settle time, or the manifest predates stamps).
struct InputStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  bool known() const { return inode != 0 || device != 0; }
  bool operator==(const InputStamp&) const = default;
};

struct ManifestInput {
  std::string path;  // tree-relative (tree_roots.hpp) or absolute
  Digest hash;
  std::string role;    // as the record names it (record.hpp): source, header, options_file, tool
  std::string passes;  // "host,compute_80", "-" when not known
  InputStamp stamp;
  // The digest of its code (cache/code_text.hpp) where a file that differs from `hash` only in
  // comments nothing sees may stand in for it: set for the tree's headers of a compile that
  // printed nothing and asked for no line information (object_cache.cpp: comments_may_matter).
  std::optional<Digest> code;
  bool operator==(const ManifestInput&) const = default;
};

struct ManifestLookup {
  std::string name;      // "gcc", found through PATH
  std::string resolved;  // tree-relative or absolute; "" when nothing was found
  bool program = true;
  bool operator==(const ManifestLookup&) const = default;
};

// Lookups that found nothing, in runs of one directory: each probe is probe_run_path(dir, name). A
// run with dir "" holds whole paths as its names (a path that a split would not give back).
struct ProbeRun {
  std::string dir;  // tree-relative (tree_roots.hpp) or absolute; "" for whole paths
  std::vector<std::string> names;
  bool operator==(const ProbeRun&) const = default;
};

// dir + "/" + name ("/" + name where dir is "/"); name alone where dir is "".
std::string probe_run_path(std::string_view dir, std::string_view name);
// Adds `path` to the last run where it has that run's directory, else in a new run: the probes
// keep their order, and probe_run_path gives each back as it was added.
void add_probe(std::vector<ProbeRun>& runs, std::string_view path);
std::size_t probe_count(const std::vector<ProbeRun>& runs);

struct ManifestEntry {
  Digest result;             // the result it produced (cache_entry.hpp)
  std::int64_t time_ns = 0;  // when it was stored
  std::vector<ManifestInput> inputs;
  std::vector<ProbeRun> probes;            // lookups that found nothing, by directory
  std::vector<DirectoryStamp> probe_dirs;  // directories that vouch for their probes (paths mapped)
  std::vector<ManifestLookup> lookups;
  // The absolute roots of the tree that stored it, when its object names them (debug info,
  // __FILE__): then it serves only a tree at the same paths. Empty: it serves any tree.
  std::string bound_build_root;
  std::string bound_source_root;
  bool operator==(const ManifestEntry&) const = default;
};

struct Manifest {
  std::vector<ManifestEntry> entries;  // newest first
  bool operator==(const Manifest&) const = default;
};

constexpr int k_manifest_format_version = 1;
constexpr size_t k_manifest_entry_limit = 24;

std::string serialize_manifest(const Manifest& manifest);
std::optional<Manifest> parse_manifest(std::string_view text, std::string* error = nullptr);
// The entries of a manifest's text one at a time, newest first (k_manifest_entry_limit at most),
// each handed to `each` as soon as it is read; `each` returns true to stop there: a lookup stops at
// its hit without parsing the older entries. False, with *error, when the text is damaged (its
// header and checksum are checked before any entry is handed over) or a line does not parse (the
// entries before that line were handed over: each entry stands alone).
// `wanted`, when given, sees each entry when its first line is read (result, time, bound roots):
// an entry it does not want is not parsed further, nor handed over.
bool for_each_manifest_entry(std::string_view text, const std::function<bool(ManifestEntry&)>& each,
                             std::string* error = nullptr,
                             const std::function<bool(const ManifestEntry&)>& wanted = {});

// Puts `entry` first, drops an older entry for the same result and the oldest beyond the limit.
void add_entry(Manifest& manifest, ManifestEntry entry);

}  // namespace nvfresh
