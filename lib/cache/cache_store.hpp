// The object cache on local disk: content-addressed files under one root (default
// $XDG_CACHE_HOME/nvfresh, i.e. ~/.cache/nvfresh), shared by every build tree of the user, read and
// written by many nvfresh processes at once.
//
//   <root>/CACHEDIR.TAG
//   <root>/<s>/                  16 shards, <s> the key's first hex digit
//   <root>/<s>/stats             the shard's counters ("name value" lines), rewritten under lock
//   <root>/<s>/lock              held (flock) while a manifest of the shard is read-modified-written
//   <root>/<s>/<ss>/<key>.manifest   cache/manifest.hpp, one zstd frame
//   <root>/<s>/<ss>/<key>.entry      cache/cache_entry.hpp, one zstd frame
//   <root>/<s>/<ss>/<key>.step       cache/step_entry.hpp, one zstd frame (one cicc or ptxas run)
//
// Every file is written to a temporary name and renamed into place: a reader sees a whole file or
// none. A file that does not decode or fails its checksum is a miss (and is replaced by the next
// store). The size is kept under a cap: every store adds to its shard's byte count, and when the
// cache is over the cap, the least recently used files (by mtime: a hit touches its entry) of that
// shard go, until the shard holds its share again: eviction is amortized over the stores, never a
// scan of the whole cache per compile. Below a free-space floor nothing is stored.
#pragma once

#include "cache/cache_entry.hpp"
#include "cache/manifest.hpp"
#include "cache/step_entry.hpp"
#include "util/hasher.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

enum class CacheCounter {
  files,  // files the cache holds
  bytes,  // bytes they take
  hits,
  misses,
  stores,
  evictions,           // files evicted
  saved_bytes,         // object bytes served instead of compiled
  saved_ns,            // nvcc time the hits saved
  not_stored_full,     // stores left out: the file system was below its free-space floor
  verified,            // hits recompiled to verify them, and the same
  verify_mismatches,   // hits recompiled whose codegen differed from the entry
  step_hits,           // cicc/ptxas runs served from step entries
  step_misses,         // cicc/ptxas runs looked up and run
  step_stores,         // step entries stored
  step_saved_ns,       // tool time the step hits saved
  remote_hits,         // lookups the remote cache served (cache/remote_cache.hpp)
  remote_misses,       // lookups it had nothing for
  remote_errors,       // calls that failed (server down, slow, refusing): a local compile
  remote_refused,      // remote entries refused: not bound to the keys asked for (a miss)
  remote_untrusted,    // remote results no trusted key signed (a miss; NVFRESH_REMOTE_TRUSTED_KEYS)
  remote_over_budget,  // compiles whose lookups ran out of their budget (cache/remote_budget.hpp)
  remote_uploads,      // results uploaded
  remote_bytes_down,   // blob bytes fetched
  remote_bytes_up,     // blob bytes uploaded (those the server did not have)
  remote_step_hits,    // step lookups the remote served (compile/step_run.hpp)
  remote_step_misses,
  remote_step_uploads,
};

inline constexpr std::array k_cache_counters = {
  CacheCounter::files,
  CacheCounter::bytes,
  CacheCounter::hits,
  CacheCounter::misses,
  CacheCounter::stores,
  CacheCounter::evictions,
  CacheCounter::saved_bytes,
  CacheCounter::saved_ns,
  CacheCounter::not_stored_full,
  CacheCounter::verified,
  CacheCounter::verify_mismatches,
  CacheCounter::step_hits,
  CacheCounter::step_misses,
  CacheCounter::step_stores,
  CacheCounter::step_saved_ns,
  CacheCounter::remote_hits,
  CacheCounter::remote_misses,
  CacheCounter::remote_errors,
  CacheCounter::remote_refused,
  CacheCounter::remote_untrusted,
  CacheCounter::remote_over_budget,
  CacheCounter::remote_uploads,
  CacheCounter::remote_bytes_down,
  CacheCounter::remote_bytes_up,
  CacheCounter::remote_step_hits,
  CacheCounter::remote_step_misses,
  CacheCounter::remote_step_uploads,
};

std::string_view counter_name(CacheCounter counter);

struct CacheCounters {
  std::array<std::int64_t, k_cache_counters.size()> values{};
  std::int64_t& operator[](CacheCounter counter) { return values[static_cast<size_t>(counter)]; }
  std::int64_t operator[](CacheCounter counter) const
  {
    return values[static_cast<size_t>(counter)];
  }
};

struct CacheLimits {
  std::uint64_t max_bytes = 0;  // the cap
  std::uint64_t min_free = 0;   // the free-space floor of the cache's file system
};

struct EvictionSummary {
  std::int64_t files = 0;
  std::int64_t bytes = 0;
};

// The stat-keyed hash cache of large files that the cache's directory keeps for every build tree
// of its user (freshness/file_hasher.hpp): a fresh tree finds nvcc's tools already hashed.
std::string shared_hash_cache_file(const std::string& cache_root);

// Why an entry that came from elsewhere (the remote), asked for under `manifest_key` and
// `result_key`, is not theirs, or "": its own key line names other keys (another compile's result
// copied onto this one's), or its object does not hash to its object digest.
std::string foreign_entry_refusal(const CacheEntry& entry, const Digest& manifest_key,
                                  const Digest& result_key);

// Why a directory of the cache may not be used, or "" when it may (or is not there yet: the store
// makes it). Never a symlink; not shared: the user's own and writable by nobody else; shared (a
// team's cache dir, NVFRESH_CACHE_SHARED): any owner, group-writable, writable by everyone only
// with the sticky bit.
std::string cache_dir_refusal(const std::string& dir, bool shared);

class CacheStore {
public:
  // `shared`: a team's cache dir (cache_dir_refusal); the directories it makes are setgid and
  // group-writable.
  CacheStore(std::string root, CacheLimits limits, bool shared = false);

  // Why this cache may not be used (its root or a shard is foreign, writable by others or a
  // symlink), or "". Nothing else here checks it: the caller asks once, before using the cache.
  std::string refusal() const;

  const std::string& root() const { return m_root; }
  const CacheLimits& limits() const { return m_limits; }

  std::optional<Manifest> read_manifest(const Digest& key) const;
  // Its text, decompressed, for a reader that parses it as far as it needs
  // (for_each_manifest_entry); nullopt when there is none or it is damaged.
  std::optional<std::string> read_manifest_text(const Digest& key) const;
  // Reads, changes and writes the manifest under the shard's lock. Throws FileWriteError.
  void update_manifest(const Digest& key, const std::function<void(Manifest&)>& change);

  // The entry stored under `key`, or nullopt with the reason: missing, damaged, or not bound to this
  // key (it names another result key, or its object does not hash to its object digest: an entry
  // file copied under another key).
  std::optional<CacheEntry> read_entry(const Digest& key, std::string* error = nullptr) const;
  // Stores an entry of this machine's bound to `key` and to its object's digest
  // (CacheEntry::result_key, object_digest). Throws FileWriteError (a full disk: disk_full()).
  void write_entry(const Digest& key, CacheEntry entry);
  // Stores an entry that came from elsewhere (the remote), asked for under `manifest_key` and
  // `key`, as it came: never bound to them here, so it must carry them itself
  // (foreign_entry_refusal). "" when stored; else why it was refused, and nothing is written.
  // Throws FileWriteError.
  std::string write_foreign_entry(const Digest& manifest_key, const Digest& key,
                                  const CacheEntry& entry);
  void touch_entry(const Digest& key);  // a hit: most recently used
  void remove_entry(const Digest& key);

  // The step entry stored under `key` (step_entry.hpp), or nullopt with the reason: missing,
  // damaged, or stored under another key. A hit touches it.
  std::optional<StepEntry> read_step(const Digest& key, std::string* error = nullptr) const;
  // Stores it bound to `key`, counted and evicted like every file. Throws FileWriteError.
  void write_step(const Digest& key, StepEntry entry);
  void touch_step(const Digest& key);

  // Whether the cache's file system has room above the floor.
  bool has_room() const;

  struct CounterChange {
    CacheCounter counter;
    std::int64_t delta;
  };
  void count(const Digest& key, CacheCounter counter, std::int64_t delta = 1);
  void count(const Digest& key, std::initializer_list<CounterChange> changes);  // one locked update
  CacheCounters counters() const;  // all shards, summed

  // Every entry key, for cache verify.
  std::vector<Digest> entry_keys() const;

  // Removes least recently used files until the cache holds at most max_bytes, and every file not
  // used since older_than_ns (0: no age limit). Recounts the shards' files and bytes.
  EvictionSummary evict(std::uint64_t max_bytes, std::int64_t older_than_ns = 0);
  void clear();

  std::string manifest_file(const Digest& key) const;
  std::string entry_file(const Digest& key) const;
  std::string step_file(const Digest& key) const;

private:
  std::string shard_dir(const Digest& key) const;
  // Makes the directories down to `dir` (the root, a shard, a shard's subdirectory) where missing;
  // throws FileWriteError when one is a symlink or refused (cache_dir_refusal): nothing is ever
  // written through a link planted in the cache dir.
  void make_cache_dirs(const std::string& dir) const;
  // Whether `dir` is a shard directory of its own (not a symlink, not a file).
  static bool is_shard_dir(const std::string& dir);
  // Writes a file of the key's shard and counts it; returns the bytes it grew by.
  std::int64_t write_counted(const Digest& key, const std::string& file, std::string_view text);
  // Writes an entry or step file under the shard's lock, counts it and evicts over the cap.
  void store_file(const Digest& key, const std::string& file, const std::string& text,
                  CacheCounter counter);
  void evict_if_over_cap(const Digest& key);
  std::int64_t evict_shard_to_share(const std::string& shard);  // bytes removed

  std::string m_root;
  CacheLimits m_limits;
  bool m_shared = false;
};

}  // namespace nvfresh
