#include "freshness/record_index.hpp"

#include "freshness/path_lookups.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <string_view>

namespace nvfresh {

namespace {

constexpr std::string_view k_path_variable = "PATH";

std::string stamp_key(const IndexedStamp& s)
{
  std::string key(reinterpret_cast<const char*>(&s.path), sizeof s.path);
  key.append(reinterpret_cast<const char*>(&s.size), sizeof s.size);
  key.append(reinterpret_cast<const char*>(&s.mtime_ns), sizeof s.mtime_ns);
  key.append(reinterpret_cast<const char*>(&s.ctime_ns), sizeof s.ctime_ns);
  key.append(reinterpret_cast<const char*>(&s.inode), sizeof s.inode);
  return key;
}

std::string directory_key(const IndexedDirectory& d)
{
  std::string key(reinterpret_cast<const char*>(&d.path), sizeof d.path);
  key += d.stamped ? '1' : '0';
  key.append(reinterpret_cast<const char*>(&d.inode), sizeof d.inode);
  key.append(reinterpret_cast<const char*>(&d.device), sizeof d.device);
  key.append(reinterpret_cast<const char*>(&d.mtime_ns), sizeof d.mtime_ns);
  key.append(reinterpret_cast<const char*>(&d.ctime_ns), sizeof d.ctime_ns);
  return key;
}

// The id of `value` in `values` (its position), added at the end the first time its key is seen.
template <typename T>
std::uint32_t interned(StringMap<std::uint32_t>& ids, std::vector<T>& values,
                       const std::string& key, const T& value)
{
  auto [found, inserted] = ids.try_emplace(key, static_cast<std::uint32_t>(values.size()));
  if (inserted) {
    values.push_back(value);
  }
  return found->second;
}

}  // namespace

IndexedStamp indexed_stamp_of(const FileStat& st)
{
  return {0, st.size, st.mtime_ns, st.ctime_ns, st.inode};
}

bool same_indexed_stamp(const IndexedStamp& a, const IndexedStamp& b)
{
  return a.size == b.size && a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns &&
         a.inode == b.inode;
}

Digest environment_digest(const std::map<std::string, std::string>& env)
{
  Hasher hasher;
  for (const auto& [name, value] : env) {
    if (name == k_path_variable) {
      continue;
    }
    hasher.field(name).field(value);
  }
  return hasher.digest();
}

const IndexedRecord* RecordIndex::find(const std::string& record_file, const FileStat& now) const
{
  auto found = m_by_file.find(record_file);
  if (found == m_by_file.end() || !now.exists) {
    return nullptr;
  }
  const IndexedRecord& r = m_records[found->second];
  return same_indexed_stamp(r.file_stamp, indexed_stamp_of(now)) ? &r : nullptr;
}

void RecordIndex::keep(const IndexedRecord& entry)
{
  m_kept[static_cast<size_t>(&entry - m_records.data())] = true;
}

bool RecordIndex::add(const std::string& record_file, const FileStat& now, const Record& record,
                      std::int64_t now_ns, std::int64_t settle_ns)
{
  if (!record.trusted || !record.inputs_from_trace || !now.exists ||
      now_ns - now.ctime_ns < settle_ns) {
    return false;
  }
  make_id_maps();
  StringViewSet probe_dirs;
  for (const auto& group : record.probes) {
    if (group.dir.empty()) {
      return false;  // a relative probe: only the full check stats it
    }
    probe_dirs.insert(group.dir);
  }
  StringViewMap<const DirectoryStamp*> stamped;
  for (const auto& stamp : record.probe_dirs) {
    stamped.emplace(stamp.path, &stamp);
  }
  // A directory that neither has a stamp nor fails to resolve now cannot vouch: its probes are
  // kept one by one (the full check stats them so too).
  StringViewSet vouching;
  for (std::string_view dir : probe_dirs) {
    const bool has_stamp = stamped.contains(dir);
    const FileStat dir_now = has_stamp ? FileStat{} : stat_file(std::string(dir));
    if (has_stamp || !dir_now.exists || !dir_now.is_directory) {
      vouching.insert(dir);
    }
  }
  IndexedRecord r;
  r.file = path_id(record_file);
  r.file_stamp = indexed_stamp_of(now);
  r.file_stamp.path = r.file;
  r.object = path_id(record.object);
  r.source = path_id(record.source);
  r.output_hash = record.output.hash;
  r.output_stamp = {r.object, record.output.size, record.output.mtime_ns, record.output.ctime_ns,
                    record.output.inode};
  r.environment = environment_digest(record.env);
  if (!path_lookups_of(record).empty()) {  // else PATH cannot change what the compile found
    auto path = record.env.find(std::string(k_path_variable));
    r.path_matters = true;
    r.path_variable = path != record.env.end() ? path->second : std::string();
  }
  r.inputs.reserve(record.inputs.size());
  for (const auto& input : record.inputs) {
    const FileFingerprint& f = input.file;
    r.inputs.push_back(stamp_id({path_id(f.path), f.size, f.mtime_ns, f.ctime_ns, f.inode}));
  }
  std::vector<std::string_view> sorted(vouching.begin(), vouching.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& group : record.probes) {
    if (!vouching.contains(group.dir)) {
      for (const auto& name : group.names) {
        r.absent.push_back(path_id(probe_path(group, name)));
      }
    }
  }
  for (std::string_view dir : sorted) {
    IndexedDirectory d;
    d.path = path_id(std::string(dir));
    if (auto found = stamped.find(dir); found != stamped.end()) {
      const DirectoryStamp& s = *found->second;
      d = {d.path, true, s.inode, s.device, s.mtime_ns, s.ctime_ns};
    }
    r.directories.push_back(directory_id(d));
  }
  if (auto existing = m_by_file.find(record_file); existing != m_by_file.end()) {
    m_records[existing->second] = std::move(r);
    m_kept[existing->second] = true;
  } else {
    m_by_file[record_file] = m_records.size();
    m_records.push_back(std::move(r));
    m_kept.push_back(true);
  }
  m_added = true;
  return true;
}

bool RecordIndex::changed() const
{
  return m_added || std::find(m_kept.begin(), m_kept.end(), false) != m_kept.end();
}

void RecordIndex::make_id_maps()
{
  if (m_id_maps) {
    return;
  }
  m_id_maps = true;
  for (size_t i = 0; i < m_paths.size(); ++i) {
    m_path_ids.emplace(m_paths[i], static_cast<std::uint32_t>(i));
  }
  for (size_t i = 0; i < m_stamps.size(); ++i) {
    m_stamp_ids.emplace(stamp_key(m_stamps[i]), static_cast<std::uint32_t>(i));
  }
  for (size_t i = 0; i < m_dirs.size(); ++i) {
    m_dir_ids.emplace(directory_key(m_dirs[i]), static_cast<std::uint32_t>(i));
  }
}

std::uint32_t RecordIndex::path_id(const std::string& path)
{
  return interned(m_path_ids, m_paths, path, path);
}

std::uint32_t RecordIndex::stamp_id(const IndexedStamp& stamp)
{
  return interned(m_stamp_ids, m_stamps, stamp_key(stamp), stamp);
}

std::uint32_t RecordIndex::directory_id(const IndexedDirectory& dir)
{
  return interned(m_dir_ids, m_dirs, directory_key(dir), dir);
}

}  // namespace nvfresh
