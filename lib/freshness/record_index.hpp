// What `check` and `sync` read from a build tree's records, kept in one file (records.index next to
// the records), so that a warm check of a tree reads one file instead of ten thousand records.
//
// It holds, per record that was fresh when it was indexed, what the freshness check needs to call
// it fresh again without reading it: the record file's own stamp, the object's fingerprint, the
// stamp of every input, each probe directory that vouches for its probes (with its stamp, or none:
// a directory that did not resolve), the probes of every other directory one by one, a digest of the compile environment, and the PATH it ran with when the compile found
// programs through it. Paths, input stamps and
// probe directories are shared by the records that have them (a tree's 2k headers), so 10k records
// of 100 inputs are 4 MB.
//
// The index is a cache: a record whose file's stamp is not the indexed one is read and judged as
// before, and an entry is only written for a record file whose ctime is settle_ns old (as the hash
// cache's rule: a same-size rewrite within one coarse clock tick keeps a stamp). An index that does
// not read back whole (version, checksum, bounds) is empty.
//
// The file's grammar is at the top of record_index_file.cpp; the judging of an entry against the
// disk is indexed_freshness.hpp.
//
// Why in freshness/ and not in record/: an entry is a freshness judgement kept, not a copy of the
// record. Only a record judged fresh gets one, and add() decides with the freshness layer's rules
// what the entry must hold: which probe directories vouch (stat'ed now), whether PATH matters
// (path_lookups.hpp), the settle rule of the hash cache.
#pragma once

#include "record/record.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"
#include "util/string_hash.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nvfresh {

struct IndexedStamp {
  std::uint32_t path = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
};

struct IndexedDirectory {
  std::uint32_t path = 0;
  bool stamped = false;  // false: it did not resolve to a directory then, and must not now
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
};

struct IndexedRecord {
  std::uint32_t file = 0;
  IndexedStamp file_stamp;  // its path is `file`
  std::uint32_t object = 0;
  std::uint32_t source = 0;
  Digest output_hash;
  IndexedStamp output_stamp;  // its path is `object`
  Digest environment;         // environment_digest(record.env)
  bool path_matters = false;  // the compile found programs on PATH (freshness/path_lookups.hpp)
  std::string path_variable;  // then: record.env's PATH ("" when it had none)
  std::vector<std::uint32_t> inputs;
  std::vector<std::uint32_t> directories;  // the probes' directories that vouch for them
  std::vector<std::uint32_t> absent;  // probes in a directory that cannot: each must stay absent
};

// A digest of a compile environment, PATH left out (check judges PATH by what it resolves).
Digest environment_digest(const std::map<std::string, std::string>& env);

class RecordIndex {
public:
  // The index of `file`, judged for the tree `build_dir`; empty when it is absent, unreadable, of
  // another version or another tree.
  static RecordIndex read(const std::string& file, const std::string& build_dir);

  // Writes the entries that were looked up or added since read (compacted), atomically. Throws
  // FileWriteError.
  void write(const std::string& file, const std::string& build_dir) const;

  // The entry of `record_file` when its file's stamp is still `now`, else nullptr.
  const IndexedRecord* find(const std::string& record_file, const FileStat& now) const;

  // Keeps an entry of this index for write() (one found still fresh).
  void keep(const IndexedRecord& entry);

  // Invalidates the pointers find() returned.
  // Adds (or replaces) the entry of a record judged fresh, whose file has stamp `now`. False (and
  // nothing added) when the record cannot be indexed: untrusted, not traced, a probe in a relative
  // directory, or its file changed less than settle_ns before now_ns.
  bool add(const std::string& record_file, const FileStat& now, const Record& record,
           std::int64_t now_ns, std::int64_t settle_ns);

  // Whether write() would write something other than what read() found.
  bool changed() const;

  const std::string& path(std::uint32_t id) const { return m_paths[id]; }
  const IndexedStamp& stamp(std::uint32_t id) const { return m_stamps[id]; }
  const IndexedDirectory& directory(std::uint32_t id) const { return m_dirs[id]; }
  size_t size() const { return m_records.size(); }
  const std::vector<IndexedRecord>& records() const { return m_records; }
  size_t path_count() const { return m_paths.size(); }
  size_t stamp_count() const { return m_stamps.size(); }
  size_t directory_count() const { return m_dirs.size(); }

private:
  void make_id_maps();
  std::uint32_t path_id(const std::string& path);
  std::uint32_t stamp_id(const IndexedStamp& stamp);
  std::uint32_t directory_id(const IndexedDirectory& dir);

  std::vector<std::string> m_paths;
  StringMap<std::uint32_t> m_path_ids;
  std::vector<IndexedStamp> m_stamps;
  StringMap<std::uint32_t> m_stamp_ids;  // by their bytes
  std::vector<IndexedDirectory> m_dirs;
  StringMap<std::uint32_t> m_dir_ids;  // by their bytes
  std::vector<IndexedRecord> m_records;
  StringMap<size_t> m_by_file;
  std::vector<bool> m_kept;  // per record: looked up or added since read
  bool m_added = false;
  bool m_id_maps = false;
};

// The index file of a record root.
std::string record_index_file(const std::string& record_root);

// The stamp of `st` (its path id left 0), and whether two stamps are the same (paths aside).
IndexedStamp indexed_stamp_of(const FileStat& st);
bool same_indexed_stamp(const IndexedStamp& a, const IndexedStamp& b);

}  // namespace nvfresh
