#include "freshness/indexed_freshness.hpp"

#include "record/signature.hpp"

namespace nvfresh {

IndexedFreshness::IndexedFreshness(const RecordIndex& index, FileHasher& hasher,
                                   const std::map<std::string, std::string>& compile_env)
  : m_index(index), m_hasher(hasher), m_environment(environment_digest(compile_env)),
    m_stamp_holds(index.stamp_count(), Unknown), m_dir_holds(index.directory_count(), Unknown),
    m_absent_holds(index.path_count(), Unknown)
{
  auto path = compile_env.find(std::string(k_path_variable));
  m_path_variable = path != compile_env.end() ? path->second : std::string();
}

void IndexedFreshness::stat_ahead(const std::vector<const IndexedRecord*>& entries)
{
  std::vector<bool> seen(m_index.path_count(), false);
  std::vector<const std::string*> paths;
  auto want = [&](std::uint32_t id) {
    if (!seen[id]) {
      seen[id] = true;
      paths.push_back(&m_index.path(id));
    }
  };
  // Every input stamp's path, from the index's table of stamps (a few thousand), not from each
  // entry's list of them (a million ids in a 10k-object tree): the stamps of records that are not
  // candidates are few.
  for (std::uint32_t id = 0; id < m_index.stamp_count(); ++id) {
    want(m_index.stamp(id).path);
  }
  for (const IndexedRecord* entry : entries) {
    if (entry == nullptr) {
      continue;
    }
    want(entry->object);
    for (std::uint32_t id : entry->directories) {
      want(m_index.directory(id).path);
    }
    for (std::uint32_t id : entry->absent) {
      want(id);
    }
  }
  m_hasher.stat_ahead(paths);
}

bool IndexedFreshness::still_fresh(const IndexedRecord& entry)
{
  if (entry.environment != m_environment ||
      (entry.path_matters && entry.path_variable != m_path_variable)) {
    return false;
  }
  if (!same_indexed_stamp(entry.output_stamp,
                          indexed_stamp_of(m_hasher.stat(m_index.path(entry.object))))) {
    return false;
  }
  for (std::uint32_t id : entry.inputs) {
    if (m_stamp_holds[id] == Unknown) {
      const IndexedStamp& s = m_index.stamp(id);
      const FileStat now = m_hasher.stat(m_index.path(s.path));
      m_stamp_holds[id] =
        now.exists && same_indexed_stamp(s, indexed_stamp_of(now)) ? Holds : Fails;
    }
    if (m_stamp_holds[id] == Fails) {
      return false;
    }
  }
  for (std::uint32_t id : entry.directories) {
    if (m_dir_holds[id] == Unknown) {
      const IndexedDirectory& d = m_index.directory(id);
      const FileStat now = m_hasher.stat(m_index.path(d.path));
      const bool holds = d.stamped ? now.exists && now.is_directory && now.inode == d.inode &&
                                       now.device == d.device && now.mtime_ns == d.mtime_ns &&
                                       now.ctime_ns == d.ctime_ns
                                   : !now.exists || !now.is_directory;
      m_dir_holds[id] = holds ? Holds : Fails;
    }
    if (m_dir_holds[id] == Fails) {
      return false;
    }
  }
  for (std::uint32_t id : entry.absent) {
    if (m_absent_holds[id] == Unknown) {
      m_absent_holds[id] = m_hasher.stat(m_index.path(id)).exists ? Fails : Holds;
    }
    if (m_absent_holds[id] == Fails) {
      return false;
    }
  }
  return true;
}

}  // namespace nvfresh
