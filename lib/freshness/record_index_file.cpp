// The record index file (record_index.hpp). File grammar (binary, little-endian; str = u32 length, bytes):
//   index     := magic version build_dir paths stamps dirs records checksum
//   magic     := "nvfresh-record-index\n"          version := u32 (1)
//   build_dir := str                               the tree the entries were judged for
//   paths     := u32 n, str * n                    ids are positions
//   stamps    := u32 n, (u32 path, u64 size, i64 mtime_ns, i64 ctime_ns, u64 inode) * n
//   dirs      := u32 n, (u32 path, u8 stamped, u64 inode, u64 device, i64 mtime_ns, i64 ctime_ns) * n
//   records   := u32 n, record * n
//   record    := u32 file, u64 size, i64 mtime_ns, i64 ctime_ns, u64 inode,     the record file
//                u32 object, u32 source, 16 bytes hash, u64 size, i64 mtime_ns, i64 ctime_ns,
//                u64 inode,                                                     the object
//                16 bytes environment digest, u8 path_matters, str PATH,
//                u32 n, u32 stamp * n,  u32 m, u32 dir * m,  u32 k, u32 path * k (absent probes)
//   checksum  := 16 bytes, XXH3-128 of every byte before it
#include "freshness/record_index.hpp"

#include "util/file_io.hpp"
#include "util/hasher.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace nvfresh {

namespace {

constexpr std::string_view k_magic = "nvfresh-record-index\n";
constexpr std::uint32_t k_version = 1;

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

constexpr size_t k_stamp_bytes = 4 + 8 * 4;
constexpr size_t k_dir_bytes = 4 + 1 + 8 * 4;
constexpr size_t k_record_bytes = k_stamp_bytes + 8 + 16 + k_stamp_bytes + 16 + 1 + 4 + 12;

}  // namespace

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

}  // namespace nvfresh
