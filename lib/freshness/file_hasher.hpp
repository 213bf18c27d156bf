// Fingerprints files (stat + XXH3-128 of the content), hashing each path at most once per process.
// Large files (toolchain binaries: cicc, ptxas, cc1plus are tens of MB) are also remembered in a
// stat-keyed cache file shared by all compiles of a build tree, so they are hashed once per change;
// with a shared cache file too (the object cache's, per user), new entries go there instead, and a
// fresh build tree finds the toolkit's hashes already known.
// A file that keeps changing while it is hashed is reported as unstable.
#pragma once

#include "record/record.hpp"
#include "util/file_io.hpp"
#include "util/string_hash.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct FingerprintResult {
  std::optional<FileFingerprint> fingerprint;  // empty: missing, unreadable or unstable
  FileStat stat;                               // what stat said (exists=false when missing)
  bool unstable = false;                       // content changed while it was being hashed
};

class FileHasher {
public:
  // cache_file: the build tree's stat-keyed cache ("" = none); shared_cache_file: one that every
  // tree of the user reads and new entries go to ("" = none: they go to cache_file). Entries are
  // appended, one line each. A file whose ctime is less than settle_ns old is not put in a cache:
  // with coarse file timestamps (kernels before 6.13) a same-size rewrite within one clock tick
  // keeps its stat, and a cached hash would then vouch for content it never saw.
  explicit FileHasher(std::string cache_file = {}, std::int64_t settle_ns = k_default_settle_ns,
                      std::string shared_cache_file = {});

  static constexpr std::int64_t k_default_settle_ns = 2'000'000'000;

  FingerprintResult fingerprint(const std::string& path);
  FileStat stat(const std::string& path);  // memoized stat

  // Memoizes the stat of every path not stat'ed yet, on several threads when there are many (a
  // CUTLASS TU has over a thousand inputs, and their stats were half of a skip's time): the same
  // stats stat() would make one by one a moment later, so no race rule changes. Returns what
  // stat() now says of each path, in their order.
  std::vector<FileStat> stat_ahead(const std::vector<const std::string*>& paths);
  static constexpr size_t k_paths_per_stat_thread = 256;

  // Hashes ahead, on several threads, the files of `paths` that fingerprint() would read: stat'ed
  // already, regular, neither fingerprinted nor seeded with their stamp, nor (at or above the
  // cache's size threshold) in the hash cache with it; the biggest first. Each worker hashes a
  // file, then stats it again; fingerprint()'s first attempt
  // takes that pair, after the memoized stat: the order it would have made them in itself (stat,
  // hash, stat). A skip of a CUTLASS TU with every header touched reads 12 MB of headers.
  void hash_ahead(const std::vector<const std::string*>& paths);
  static constexpr size_t k_paths_per_hash_thread = 32;

  // True when `recorded` still describes the file: same stat stamp, else same content hash.
  // Sets *now to the current fingerprint when it had to be computed.
  bool unchanged(const FileFingerprint& recorded, std::optional<FileFingerprint>* now = nullptr);

  static constexpr std::uint64_t k_cached_size_threshold = std::uint64_t{512} * 1024;

  // Stat stamps whose content is known (the inputs of a trusted record of the same object):
  // fingerprint() takes the stamp's hash, without reading the file, while the file's size, mtime,
  // ctime and inode are still the stamp's, as a skip does. A cache lookup in the tree of the last
  // compile then hashes only what changed since.
  void seed(const std::vector<FileFingerprint>& known);

private:
  struct CacheEntry {
    FileStat stat;
    Digest hash;
  };
  using DiskCache = StringMap<CacheEntry>;
  struct Prehashed {
    std::optional<Digest> hash;
    FileStat after;
  };

  void load_cache();
  static DiskCache load_cache_file(const std::string& file);
  std::optional<Digest> cached_hash(const std::string& path, const FileStat& stat) const;
  void remember(const std::string& path, const FileStat& stat, const Digest& hash);

  std::string m_cache_file;
  std::string m_shared_cache_file;
  std::int64_t m_settle_ns;
  bool m_cache_loaded = false;
  DiskCache m_disk_cache;    // the tree's file
  DiskCache m_shared_cache;  // the shared file
  // The stat memo's keys are views of copies kept in blocks of this hasher: one allocation per
  // 64 KB of paths, not one per path (a skip memoizes a thousand).
  std::string_view kept_key(std::string_view path);
  void memo_stat(std::string_view path, const FileStat& stat);

  StringMap<FingerprintResult> m_memo;
  std::vector<std::unique_ptr<char[]>> m_key_blocks;
  char* m_key_next = nullptr;
  std::size_t m_key_room = 0;
  StringViewMap<FileStat> m_stat_memo;
  StringMap<FileFingerprint> m_seeds;
  StringMap<Prehashed> m_prehashed;
};

}  // namespace nvfresh
