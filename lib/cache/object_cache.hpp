// nvfresh's object cache: nvcc never runs twice for the same inputs (a branch switch and back, a
// second build directory, a clean build, another checkout). The key is everything a record proves
// and nothing weaker:
//   - the manifest key: the command signature (normalized arguments, the NVCC_* and include
//     environment, the working directory), the nvcc that runs and the source's content, with the
//     tree roots left out (tree_roots.hpp);
//   - the manifest's entries: the content of every input of every pass the tracer saw, the lookups
//     that found nothing, and what PATH resolved; an entry matches when all of them still hold.
// An entry is bound only to the roots its object names (tree_roots.hpp), found in its host bytes and
// its decompressed device code, measured with nvcc 13.0 (README, "What binds a cache entry"):
//   - the source root: __FILE__ in host or device code (error-check macros, assert, printf),
//     -lineinfo: it serves every build dir of that checkout (the module id of -rdc hashes the
//     source's path but `nvfresh compare` factors it out: it binds nothing);
//   - the build root: -g and -G (DW_AT_comp_dir is the working directory), __FILE__ of a header
//     generated into the build tree: it serves that build dir only;
//   - both: LTO-IR (-dlto), which nothing here reads;
//   - neither: any build dir and any checkout.
// An entry bound to another tree's root is not served (it is not what this tree's compile gives),
// unless cache_across_checkouts is set: then it is, when no entry of this tree matches, and the
// hit says "served from another checkout: names <root>".
//
// Never stored: failed compiles, untrusted (raced) records, compiles the tracer did not see, output
// that was not captured. Nothing here ever fails a build: a damaged entry is a miss, a full disk
// means "not cached".
#pragma once

#include "cache/cache_storage.hpp"
#include "cache/compile_identity.hpp"
#include "cache/tree_roots.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "record/record.hpp"
#include "util/environment.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

// An entry's input set as a lookup found it on this tree's disk.
struct MatchedSet {
  // The inputs at this tree's paths, in the entry's order, each with its fingerprint now: the stat
  // stamp the lookup vouched for or the hash it checked (an options file: its mapped hash only).
  std::vector<RecordedInput> inputs;
  std::vector<ProbeGroup> probes;  // the matched probes as this tree spells them, by directory
  // This tree's files that differ from the entry's only in comments nothing sees
  // (cache/code_text.hpp): the hit stands for them.
  std::vector<std::string> comment_only;
};

struct CacheHit {
  Digest key;
  CacheEntry entry;
  ManifestEntry matched;  // the input set that matched, tree-relative
  PathMap map;
  std::vector<RecordedInput> inputs;  // MatchedSet::inputs
  std::vector<ProbeGroup> probes;     // the matched probes as this tree spells them, by directory
  // Where the object names another tree's paths (served with NVFRESH_CACHE_ACROSS_CHECKOUTS=1):
  // "served from another checkout: names /a/src"; "" where it names only this tree's, or none.
  std::string elsewhere;
  // This tree's files that differ from the entry's only in comments nothing sees
  // (cache/code_text.hpp): the hit stands for them.
  std::vector<std::string> comment_only;
};

// Hands the hit's checked fingerprints to the hasher (FileHasher::seed) where the hit is not served
// and a compile follows: its record then hashes none of those files again.
void seed_hasher(const CacheHit& hit, FileHasher& hasher);

// The hash a manifest holds for an options file (the Makefiles generator's includes_CUDA.rsp,
// which spells the checkout's -I paths): of its content with the tree roots mapped
// (PathMap::text_to_key), as the arguments it holds are in the manifest key; nullopt when it
// cannot be read.
std::optional<Digest> options_file_hash(const std::string& path, const PathMap& map);

// The result key of an input set of the manifest `manifest_key`: what a store names its entry by.
Digest result_key(const Digest& manifest_key, const ManifestEntry& entry);

// Leaves out of a remote manifest's entries each that does not name the result key of its own
// input set (result_key), logged: such a relinked entry would serve another input set's result,
// from the remote or from this machine's cache. The number left out.
size_t drop_relinked_entries(const Digest& manifest_key, std::vector<ManifestEntry>& entries);

// A manifest's probes (key paths) as this tree spells them, by directory (record.hpp).
std::vector<ProbeGroup> probe_groups_in_tree(const std::vector<ProbeRun>& runs, const PathMap& map);

struct StoreOutcome {
  bool stored = false;
  bool no_space = false;      // below the free-space floor, or the disk filled up while writing
  std::string detail;         // why not, in words
  std::optional<Digest> key;  // the entry stored
};

class ObjectCache {
public:
  explicit ObjectCache(const CacheSettings& settings);

  // The store and the remote (cache/cache_storage.hpp): with a remote, a local miss asks it and a
  // store uploads to it unless it is read-only.
  CacheStorage& storage() { return m_storage; }
  CacheStore& store() { return m_storage.local(); }
  const CacheStore& store() const { return m_storage.local(); }
  const CacheSettings& settings() const { return m_storage.settings(); }

  // The entry whose input set matches the disk now, or nullopt (a miss, counted).
  std::optional<CacheHit> lookup(const CompileIdentity& identity, FileHasher& hasher,
                                 const Environment& env);

  // The entry a record names (Record::cache_entry) when it holds the very object the record
  // describes (its bytes hash to record.output.hash) and is bound to the roots of the tree at
  // build_tree as a lookup requires (another tree's only with across_checkouts, *elsewhere then
  // saying so), a hit, counted; else nullopt, not counted: the caller looks the compile up.
  std::optional<CacheEntry> entry_for_record(const Record& record, const std::string& build_tree,
                                             std::string* elsewhere = nullptr);

  // Stores the result of a compile that was recorded trusted and traced, and whose output does not
  // depend on mtimes (Record::mtime_dependent). The object is read from its recorded path. Never
  // throws.
  StoreOutcome store_result(const CompileIdentity& identity, const Record& record,
                            const std::vector<std::string>& command, const Environment& env);

  // Why the input set the entry was stored with no longer holds in its origin tree, or "" when it
  // does (cache verify: an entry is judged only against its own inputs, never another tree's).
  std::string inputs_changed(const Digest& key, const CacheEntry& entry, FileHasher& hasher) const;

  // An entry was compiled again to verify it: true when the compile's digests are those of the
  // object the entry holds (held_components, never the digests it claims; counted), false when
  // they differ (counted, and the entry keeps the new variant).
  bool note_verified(const Digest& key, const CacheEntry& entry,
                     const std::map<std::string, Digest>& compiled);

private:
  void note_hit(const Digest& key, const CacheEntry& entry);  // most recently used, counted
  std::optional<Digest> manifest_key(const CompileIdentity& identity, const PathMap& map,
                                     FileHasher& hasher) const;
  struct SearchPath {
    std::string path_value;  // PATH
    std::string working_dir;
  };
  // The stored entry when the disk matches `entry`'s input set, or nullopt (logged); *matched
  // gets the set as this tree has it (files that differ from the entry only in comments nothing
  // sees have their hashes now in `entry`).
  std::optional<CacheEntry> matching_entry(ManifestEntry& entry, const PathMap& map,
                                           FileHasher& hasher, const SearchPath& search,
                                           MatchedSet* matched);
  // The first entry of `entries` that matches (one naming another tree only when nothing else
  // does and across_checkouts is set); with `fetch`, an entry that matches the disk but is not
  // stored here is fetched from the remote and stored first.
  struct RemoteLookup;
  std::optional<CacheHit> search(std::vector<ManifestEntry> entries, const Digest& key,
                                 const PathMap& map, FileHasher& hasher, const SearchPath& path,
                                 RemoteLookup* fetch);
  // Whether an entry that names the other tree `other` ("" for none) is passed over (logged):
  // always without across_checkouts, and with it once one such entry matched.
  bool passed_over(const ManifestEntry& entry, const std::string& other, bool have_elsewhere) const;
  // One entry of a search: the hit when it matches and names this tree; one that matches and
  // names another tree (served with across_checkouts when none names this one) goes to
  // `elsewhere`, the first only.
  std::optional<CacheHit> judge(ManifestEntry& entry, const Digest& key, const PathMap& map,
                                FileHasher& hasher, const SearchPath& path, RemoteLookup* fetch,
                                std::optional<CacheHit>& elsewhere);
  // The remote's manifest merged into the local one and searched (with a fetch of the entry that
  // matches). Throws when the remote fails.
  std::optional<CacheHit> remote_lookup(RemoteBackend& remote, const CompileIdentity& identity,
                                        const Digest& key, const PathMap& map, FileHasher& hasher,
                                        const SearchPath& path);
  void publish(const CompileIdentity& identity, const Digest& key, const ManifestEntry& entry,
               const CacheEntry& stored, const std::string& object, const PathMap& map);

  CacheStorage m_storage;
};

}  // namespace nvfresh
