// SHA-256 digests as REAPI names blobs (build.bazel.remote.execution.v2.Digest: the lowercase hex
// hash and the size). REAPI has no XXH3: nvfresh keeps XXH3-128 for its local key and computes
// SHA-256 only for what it shares with a remote cache (OpenSSL's libcrypto).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace nvfresh::reapi {

struct BlobDigest {
  std::string hash;  // 64 lowercase hex digits
  std::int64_t size = 0;
  bool operator==(const BlobDigest&) const = default;
  auto operator<=>(const BlobDigest&) const = default;
};

BlobDigest digest_of(std::string_view bytes);

// The digest of a file's content. Throws std::runtime_error when it cannot be read.
BlobDigest digest_of_file(const std::string& path);

// SHA-256 of large files kept by their stat (device, inode, size, mtime, ctime) in one file, so
// that nvcc's tools (cicc, ptxas, cc1plus: hundreds of MB, the same for every compile) are hashed
// once, not per Action. Only files of at least k_min_size whose stat is the same before and after
// hashing, and whose mtime is more than a second old, are kept. The file is "path TAB dev TAB ino TAB
// size TAB mtime_ns TAB ctime_ns TAB hash" lines, replaced whole (atomic rename) when it grew; a line
// that does not parse is ignored. A large file not in the cache is hashed under the cache's lock
// (<file>.lock, flock) and saved at once: a build's first compiles, each looking up or uploading at
// the same moment, hash nvcc's tools once between them, not once each. An entry only ever names an input root's digest: the cache key's
// soundness rests on nvfresh's own XXH3 check of every input, not on it.
class DigestCache {
public:
  static constexpr std::int64_t k_min_size = 1 << 20;

  explicit DigestCache(std::string file);
  BlobDigest digest_of_file(const std::string& path);
  // Adds this cache's entries to the file's (merged under the lock: another process's entries
  // stay). Never throws: a cache that cannot be written is a cache not kept.
  void save();

private:
  struct Stamp {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  struct Entry {
    Stamp stamp;
    std::string hash;
  };
  static bool stamp_of(const std::string& path, Stamp& stamp);
  // The file's entries, added to this cache's where it has none for a path.
  void merge_file();
  // save() with the lock held.
  void write_merged();

  std::string m_file;
  std::map<std::string, Entry> m_entries;
  bool m_changed = false;
};

}  // namespace nvfresh::reapi
