// Judges the entries of a record index (record_index.hpp) against the disk, without reading records.
#pragma once

#include "freshness/file_hasher.hpp"
#include "freshness/record_index.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nvfresh {

// The freshness check of FreshnessChecker::check for an indexed record, from the index alone: true
// when the record's object and every input still have their recorded stamps, every stamped probe
// directory its stamp, every unstamped one resolves to no directory, every other probe is absent,
// the environment is
// the compile's, and so is PATH where the compile found programs on it. False means "read the record": a stamp that moved may still hold the
// same content, which only the full check can tell. Each stamp and directory is judged once for
// all the records that share it.
class IndexedFreshness {
public:
  // compile_env: compile_environment() of the build's environment (record/signature.hpp).
  IndexedFreshness(const RecordIndex& index, FileHasher& hasher,
                   const std::map<std::string, std::string>& compile_env);

  // Stats every path the entries need, on several threads (FileHasher::stat_ahead).
  void stat_ahead(const std::vector<const IndexedRecord*>& entries);

  bool still_fresh(const IndexedRecord& entry);

private:
  enum Judged : std::uint8_t { Unknown, Holds, Fails };
  const RecordIndex& m_index;
  FileHasher& m_hasher;
  Digest m_environment;
  std::string m_path_variable;
  std::vector<Judged> m_stamp_holds;
  std::vector<Judged> m_dir_holds;
  std::vector<Judged> m_absent_holds;  // by path id
};

}  // namespace nvfresh
