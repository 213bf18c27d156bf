#include "freshness/record_index.hpp"

#include "freshness/input_check.hpp"
#include "freshness/path_lookups.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

namespace nvfresh {

namespace {

constexpr std::string_view k_magic = "nvfresh-record-index\n";
constexpr std::uint32_t k_version = 1;
constexpr std::string_view k_path_variable = "PATH";

class Writer {
public:
  template <typename T>
  void put(T value)
  {
    m_out.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_bytes(std::string_view bytes) { m_out.append(bytes); }
  void put_string(std::string_view text)
  {
    put(static_cast<std::uint32_t>(text.size()));
    m_out.append(text);
  }
  void put_digest(const Digest& digest)
  {
    m_out.append(reinterpret_cast<const char*>(digest.bytes.data()), digest.bytes.size());
  }
  void put_stamp(const IndexedStamp& s, std::uint32_t path)
  {
    put(path);
    put(s.size);
    put(s.mtime_ns);
    put(s.ctime_ns);
    put(s.inode);
  }
  std::string finish()
  {
    put_digest(hash_bytes(m_out));
    return std::move(m_out);
  }

private:
  std::string m_out;
};

// Every read is bounds-checked; the first one that does not fit makes the reader fail for good.
class Reader {
public:
  explicit Reader(std::string_view bytes) : m_bytes(bytes) {}
  template <typename T>
  T get()
  {
    T value{};
    if (!take(sizeof value)) {
      return value;
    }
    std::memcpy(&value, m_bytes.data() + m_at - sizeof value, sizeof value);
    return value;
  }
  std::string get_string()
  {
    const auto size = get<std::uint32_t>();
    if (!take(size)) {
      return {};
    }
    return std::string(m_bytes.substr(m_at - size, size));
  }
  Digest get_digest()
  {
    Digest digest;
    if (take(digest.bytes.size())) {
      std::memcpy(digest.bytes.data(), m_bytes.data() + m_at - digest.bytes.size(),
                  digest.bytes.size());
    }
    return digest;
  }
  IndexedStamp get_stamp()
  {
    IndexedStamp s;
    s.path = get<std::uint32_t>();
    s.size = get<std::uint64_t>();
    s.mtime_ns = get<std::int64_t>();
    s.ctime_ns = get<std::int64_t>();
    s.inode = get<std::uint64_t>();
    return s;
  }
  // `count` ids written one after another, copied at once (a record has a hundred or more).
  void get_ids(std::uint32_t count, std::vector<std::uint32_t>& ids)
  {
    const size_t bytes = size_t{count} * sizeof(std::uint32_t);
    if (count == 0 || !take(bytes)) {
      return;
    }
    ids.resize(count);
    std::memcpy(ids.data(), m_bytes.data() + m_at - bytes, bytes);
  }
  // A count of items of at least `item_size` bytes each: no more than the bytes left can hold.
  std::uint32_t get_count(size_t item_size)
  {
    const auto count = get<std::uint32_t>();
    if (count > (m_bytes.size() - m_at) / std::max<size_t>(item_size, 1)) {
      m_failed = true;
      return 0;
    }
    return count;
  }
  bool ok() const { return !m_failed; }
  bool at_end() const { return m_at == m_bytes.size(); }

private:
  bool take(size_t size)
  {
    if (m_failed || size > m_bytes.size() - m_at) {
      m_failed = true;
      return false;
    }
    m_at += size;
    return true;
  }
  std::string_view m_bytes;
  size_t m_at = 0;
  bool m_failed = false;
};

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

IndexedStamp stamp_of(const FileStat& st)
{
  return {0, st.size, st.mtime_ns, st.ctime_ns, st.inode};
}

bool same_stamp(const IndexedStamp& a, const IndexedStamp& b)
{
  return a.size == b.size && a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns &&
         a.inode == b.inode;
}

constexpr size_t k_stamp_bytes = 4 + 8 * 4;
constexpr size_t k_dir_bytes = 4 + 1 + 8 * 4;
constexpr size_t k_record_bytes = k_stamp_bytes + 8 + 16 + k_stamp_bytes + 16 + 1 + 4 + 12;

}  // namespace

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

std::string record_index_file(const std::string& record_root)
{
  return record_root + "/records.index";
}

RecordIndex RecordIndex::read(const std::string& file, const std::string& build_dir)
{
  auto bytes = try_read_file(file);
  if (!bytes || bytes->size() < k_magic.size() + 16 ||
      std::string_view(*bytes).substr(0, k_magic.size()) != k_magic) {
    return {};
  }
  const std::string_view body = std::string_view(*bytes).substr(0, bytes->size() - 16);
  Digest stored;
  std::memcpy(stored.bytes.data(), bytes->data() + body.size(), stored.bytes.size());
  if (hash_bytes(body) != stored) {
    return {};
  }
  Reader in(body.substr(k_magic.size()));
  if (in.get<std::uint32_t>() != k_version || in.get_string() != build_dir) {
    return {};
  }
  RecordIndex index;  // its id maps are made when the first record is added (rare on a no-op)
  const auto paths = in.get_count(4);
  index.m_paths.reserve(paths);
  for (std::uint32_t i = 0; i < paths && in.ok(); ++i) {
    index.m_paths.push_back(in.get_string());
  }
  const auto valid_path = [&](std::uint32_t id) { return id < index.m_paths.size(); };
  const auto stamps = in.get_count(k_stamp_bytes);
  index.m_stamps.reserve(stamps);
  for (std::uint32_t i = 0; i < stamps && in.ok(); ++i) {
    const IndexedStamp s = in.get_stamp();
    if (!valid_path(s.path)) {
      return {};
    }
    index.m_stamps.push_back(s);
  }
  const auto dirs = in.get_count(k_dir_bytes);
  for (std::uint32_t i = 0; i < dirs && in.ok(); ++i) {
    IndexedDirectory d;
    d.path = in.get<std::uint32_t>();
    d.stamped = in.get<std::uint8_t>() != 0;
    d.inode = in.get<std::uint64_t>();
    d.device = in.get<std::uint64_t>();
    d.mtime_ns = in.get<std::int64_t>();
    d.ctime_ns = in.get<std::int64_t>();
    if (!valid_path(d.path)) {
      return {};
    }
    index.m_dirs.push_back(d);
  }
  const auto records = in.get_count(k_record_bytes);
  for (std::uint32_t i = 0; i < records && in.ok(); ++i) {
    IndexedRecord r;
    r.file_stamp = in.get_stamp();
    r.file = r.file_stamp.path;
    r.object = in.get<std::uint32_t>();
    r.source = in.get<std::uint32_t>();
    r.output_hash = in.get_digest();
    r.output_stamp = in.get_stamp();
    r.environment = in.get_digest();
    r.path_matters = in.get<std::uint8_t>() != 0;
    r.path_variable = in.get_string();
    in.get_ids(in.get_count(4), r.inputs);
    in.get_ids(in.get_count(4), r.directories);
    in.get_ids(in.get_count(4), r.absent);
    const bool ids_valid =
      valid_path(r.file) && valid_path(r.object) && valid_path(r.source) &&
      r.output_stamp.path == r.object &&
      std::all_of(r.inputs.begin(), r.inputs.end(),
                  [&](std::uint32_t id) { return id < index.m_stamps.size(); }) &&
      std::all_of(r.directories.begin(), r.directories.end(),
                  [&](std::uint32_t id) { return id < index.m_dirs.size(); }) &&
      std::all_of(r.absent.begin(), r.absent.end(), valid_path);
    if (!ids_valid) {
      return {};
    }
    index.m_by_file[index.m_paths[r.file]] = index.m_records.size();
    index.m_records.push_back(std::move(r));
  }
  if (!in.ok() || !in.at_end()) {
    return {};
  }
  index.m_kept.assign(index.m_records.size(), false);
  return index;
}

void RecordIndex::write(const std::string& file, const std::string& build_dir) const
{
  // Only what the kept records use, renumbered in the order they use it.
  std::vector<std::uint32_t> path_map(m_paths.size(), UINT32_MAX);
  std::vector<std::uint32_t> stamp_map(m_stamps.size(), UINT32_MAX);
  std::vector<std::uint32_t> dir_map(m_dirs.size(), UINT32_MAX);
  std::vector<std::uint32_t> paths;
  std::vector<std::uint32_t> stamps;
  std::vector<std::uint32_t> dirs;
  auto use_path = [&](std::uint32_t id) {
    if (path_map[id] == UINT32_MAX) {
      path_map[id] = static_cast<std::uint32_t>(paths.size());
      paths.push_back(id);
    }
    return path_map[id];
  };
  std::vector<const IndexedRecord*> kept;
  for (size_t i = 0; i < m_records.size(); ++i) {
    if (!m_kept[i]) {
      continue;
    }
    const IndexedRecord& r = m_records[i];
    kept.push_back(&r);
    use_path(r.file);
    use_path(r.object);
    use_path(r.source);
    for (std::uint32_t id : r.inputs) {
      if (stamp_map[id] == UINT32_MAX) {
        use_path(m_stamps[id].path);
        stamp_map[id] = static_cast<std::uint32_t>(stamps.size());
        stamps.push_back(id);
      }
    }
    for (std::uint32_t id : r.directories) {
      if (dir_map[id] == UINT32_MAX) {
        use_path(m_dirs[id].path);
        dir_map[id] = static_cast<std::uint32_t>(dirs.size());
        dirs.push_back(id);
      }
    }
    for (std::uint32_t id : r.absent) {
      use_path(id);
    }
  }
  Writer out;
  out.put_bytes(k_magic);
  out.put(k_version);
  out.put_string(build_dir);
  out.put(static_cast<std::uint32_t>(paths.size()));
  for (std::uint32_t id : paths) {
    out.put_string(m_paths[id]);
  }
  out.put(static_cast<std::uint32_t>(stamps.size()));
  for (std::uint32_t id : stamps) {
    out.put_stamp(m_stamps[id], path_map[m_stamps[id].path]);
  }
  out.put(static_cast<std::uint32_t>(dirs.size()));
  for (std::uint32_t id : dirs) {
    const IndexedDirectory& d = m_dirs[id];
    out.put(path_map[d.path]);
    out.put(static_cast<std::uint8_t>(d.stamped ? 1 : 0));
    out.put(d.inode);
    out.put(d.device);
    out.put(d.mtime_ns);
    out.put(d.ctime_ns);
  }
  out.put(static_cast<std::uint32_t>(kept.size()));
  for (const IndexedRecord* r : kept) {
    out.put_stamp(r->file_stamp, path_map[r->file]);
    out.put(path_map[r->object]);
    out.put(path_map[r->source]);
    out.put_digest(r->output_hash);
    out.put_stamp(r->output_stamp, path_map[r->object]);
    out.put_digest(r->environment);
    out.put(static_cast<std::uint8_t>(r->path_matters ? 1 : 0));
    out.put_string(r->path_variable);
    out.put(static_cast<std::uint32_t>(r->inputs.size()));
    for (std::uint32_t id : r->inputs) {
      out.put(stamp_map[id]);
    }
    out.put(static_cast<std::uint32_t>(r->directories.size()));
    for (std::uint32_t id : r->directories) {
      out.put(dir_map[id]);
    }
    out.put(static_cast<std::uint32_t>(r->absent.size()));
    for (std::uint32_t id : r->absent) {
      out.put(path_map[id]);
    }
  }
  write_file_atomically(file, out.finish());
}

const IndexedRecord* RecordIndex::find(const std::string& record_file, const FileStat& now) const
{
  auto found = m_by_file.find(record_file);
  if (found == m_by_file.end() || !now.exists) {
    return nullptr;
  }
  const IndexedRecord& r = m_records[found->second];
  return same_stamp(r.file_stamp, stamp_of(now)) ? &r : nullptr;
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
  r.file_stamp = stamp_of(now);
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
  if (!same_stamp(entry.output_stamp, stamp_of(m_hasher.stat(m_index.path(entry.object))))) {
    return false;
  }
  for (std::uint32_t id : entry.inputs) {
    if (m_stamp_holds[id] == Unknown) {
      const IndexedStamp& s = m_index.stamp(id);
      const FileStat now = m_hasher.stat(m_index.path(s.path));
      m_stamp_holds[id] = now.exists && same_stamp(s, stamp_of(now)) ? Holds : Fails;
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
