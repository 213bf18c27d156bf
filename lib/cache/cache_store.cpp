// Shard stats file grammar: one "name SP value LF" line per counter (counter_name); a line that does
// not parse counts as zero (the counters are statistics: losing them only loses statistics).
#include "cache/cache_store.hpp"

#include "util/compressed_file.hpp"
#include "util/disk_space.hpp"
#include "util/file_io.hpp"
#include "util/name_table.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <list>
#include <map>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

constexpr unsigned long long k_max_entry_text = 8ULL << 30;  // an object of a few GB, escaped

void set_error(std::string* error, std::string what)
{
  if (error != nullptr) {
    *error = std::move(what);
  }
}

// An entry or step file read and parsed by `parse`; nullopt with *error set when it is missing,
// damaged, or `parse` refuses it.
template <typename Parse>
auto read_stored(const std::string& file, std::string* error, Parse parse)
  -> decltype(parse(std::string()))
{
  try {
    auto text = try_read_compressed_file(file, k_max_entry_text);
    if (!text) {
      set_error(error, "missing");
      return std::nullopt;
    }
    return parse(*text);
  } catch (const CompressedFileError& damaged) {
    set_error(error, damaged.what());
    return std::nullopt;
  }
}
constexpr double k_shard_fill_after_eviction = 0.9;
constexpr const char* k_shards = "0123456789abcdef";

struct CounterName {
  CacheCounter counter;
  std::string_view name;
};

constexpr CounterName k_counter_names[] = {
  {CacheCounter::files, "files"},
  {CacheCounter::bytes, "bytes"},
  {CacheCounter::hits, "hits"},
  {CacheCounter::misses, "misses"},
  {CacheCounter::stores, "stores"},
  {CacheCounter::evictions, "evictions"},
  {CacheCounter::saved_bytes, "saved_bytes"},
  {CacheCounter::saved_ns, "saved_ns"},
  {CacheCounter::not_stored_full, "not_stored_full"},
  {CacheCounter::verified, "verified"},
  {CacheCounter::verify_mismatches, "verify_mismatches"},
  {CacheCounter::step_hits, "step_hits"},
  {CacheCounter::step_misses, "step_misses"},
  {CacheCounter::step_stores, "step_stores"},
  {CacheCounter::step_saved_ns, "step_saved_ns"},
  {CacheCounter::remote_hits, "remote_hits"},
  {CacheCounter::remote_misses, "remote_misses"},
  {CacheCounter::remote_errors, "remote_errors"},
  {CacheCounter::remote_refused, "remote_refused"},
  {CacheCounter::remote_untrusted, "remote_untrusted"},
  {CacheCounter::remote_over_budget, "remote_over_budget"},
  {CacheCounter::remote_uploads, "remote_uploads"},
  {CacheCounter::remote_bytes_down, "remote_bytes_down"},
  {CacheCounter::remote_bytes_up, "remote_bytes_up"},
  {CacheCounter::remote_step_hits, "remote_step_hits"},
  {CacheCounter::remote_step_misses, "remote_step_misses"},
  {CacheCounter::remote_step_uploads, "remote_step_uploads"},
};

// An open file held under flock(LOCK_EX) for the lifetime of the object. Never opened through a
// symlink (O_NOFOLLOW): a link planted in the cache dir would turn the counters' rewrite against a
// file of the user's. The caller makes its directory (CacheStore::make_cache_dirs).
class LockedFile {
public:
  explicit LockedFile(const std::string& path, bool shared = false)
  {
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (m_fd < 0 && errno == ELOOP) {
      throw std::runtime_error(fmt::format(
        "{} is a symbolic link: nvfresh never writes through a link in its cache dir (remove it)",
        path));
    }
    if (m_fd < 0) {
      throw FileWriteError(path, errno);
    }
    if (shared) {
      [[maybe_unused]] int ignored = ::fchmod(m_fd, 0664);  // the team's; fails unless ours
    }
    while (::flock(m_fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~LockedFile() { ::close(m_fd); }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;
  LockedFile(LockedFile&&) = delete;
  LockedFile& operator=(LockedFile&&) = delete;
  int fd() const { return m_fd; }

private:
  int m_fd = -1;
};

CacheCounters parse_counters(std::string_view text)
{
  CacheCounters counters;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const size_t space = line.find(' ');
    const CounterName* row =
      space == std::string_view::npos
        ? nullptr
        : find_row(k_counter_names, &CounterName::name, line.substr(0, space));
    std::int64_t value = 0;
    if (row != nullptr && parse_number(line.substr(space + 1), value)) {
      counters[row->counter] = value;
    }
  }
  return counters;
}

std::string format_counters(const CacheCounters& counters)
{
  std::string text;
  for (const auto& row : k_counter_names) {
    text += fmt::format("{} {}\n", row.name, std::max<std::int64_t>(0, counters[row.counter]));
  }
  return text;
}

// Reads the counters of a locked stats file, lets `change` change them, writes them back.
void update_counters(const std::string& stats_file,
                     const std::function<void(CacheCounters&)>& change, bool shared = false)
{
  LockedFile locked(stats_file, shared);
  std::string text;
  read_chunks(locked.fd(), [&](std::string_view chunk) {
    text.append(chunk);
    return text.size() < size_t{64} * 1024;
  });
  CacheCounters counters = parse_counters(text);
  change(counters);
  const std::string updated = format_counters(counters);
  // Written over in place, then cut to length: a truncation to zero makes ext4 (auto_da_alloc)
  // write the file's blocks out at once, a third of a millisecond on every hit and store.
  const ssize_t written = ::pwrite(locked.fd(), updated.data(), updated.size(), 0);
  if (written == static_cast<ssize_t>(updated.size())) {
    [[maybe_unused]] int ignored = ::ftruncate(locked.fd(), static_cast<off_t>(updated.size()));
  }
}

struct CachedFile {
  std::string path;
  std::int64_t mtime_ns = 0;
  std::uint64_t size = 0;
};

// The entries and manifests of a shard; a symlink is never walked into (recursive_directory_iterator
// does not follow links below it; the shard itself is checked by the caller: is_shard_dir).
std::vector<CachedFile> files_of(const std::string& shard)
{
  std::vector<CachedFile> files;
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(shard, error)) {
    const std::string path = entry.path().string();
    if (path.ends_with(".entry") || path.ends_with(".manifest") || path.ends_with(".step")) {
      FileStat st = lstat_file(path);
      files.push_back({path, st.mtime_ns, st.size});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const CachedFile& a, const CachedFile& b) { return a.mtime_ns < b.mtime_ns; });
  return files;
}

// Why an entry read under `key` is not the entry stored there, or "".
std::string entry_binding_error(const CacheEntry& entry, const Digest& key)
{
  if (entry.result_key != key) {
    return fmt::format("it was stored under another key ({})", entry.result_key.short_hex());
  }
  if (hash_bytes(entry.object) != entry.object_digest) {
    return "its object does not match the digest stored with it";
  }
  return {};
}

std::uint64_t default_cap(const std::string& root)
{
  constexpr std::uint64_t k_cap_limit = 20ULL << 30;
  const FileSystemSpace space = file_system_space(root);
  return space.known ? std::min(k_cap_limit, space.total_bytes / 20) : k_cap_limit;
}

}  // namespace

std::string_view counter_name(CacheCounter counter)
{
  const CounterName* row = find_row(k_counter_names, &CounterName::counter, counter);
  return row != nullptr ? row->name : "unknown";
}

std::string foreign_entry_refusal(const CacheEntry& entry, const Digest& manifest_key,
                                  const Digest& result_key)
{
  if (entry.manifest_key != manifest_key) {
    return fmt::format("it names another manifest ({})", entry.manifest_key.short_hex());
  }
  return entry_binding_error(entry, result_key);
}

std::string cache_dir_refusal(const std::string& dir, bool shared)
{
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return errno == ENOENT ? std::string() : fmt::format("{}: {}", dir, std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) {
    return fmt::format("{} is a symbolic link", dir);
  }
  if (!S_ISDIR(st.st_mode)) {
    return fmt::format("{} is not a directory", dir);
  }
  const bool everyone_writes = (st.st_mode & S_IWOTH) != 0;
  if (shared) {
    return everyone_writes && (st.st_mode & S_ISVTX) == 0
             ? fmt::format("{} is writable by everyone (a team's cache dir is writable by its "
                           "group: chmod o-w)",
                           dir)
             : std::string();
  }
  if (st.st_uid != ::geteuid()) {
    return fmt::format("{} belongs to uid {}, not to you", dir, st.st_uid);
  }
  if (everyone_writes || (st.st_mode & S_IWGRP) != 0) {
    return fmt::format("{} is writable by {} (chmod go-w)", dir,
                       everyone_writes ? "everyone" : "its group");
  }
  return {};
}

CacheStore::CacheStore(std::string root, CacheLimits limits, bool shared)
  : m_root(std::move(root)), m_limits(limits), m_shared(shared)
{
  while (m_root.size() > 1 && m_root.back() == '/') {
    m_root.pop_back();
  }
  if (m_limits.max_bytes == 0) {
    m_limits.max_bytes = default_cap(m_root);
  }
}

std::string CacheStore::refusal() const
{
  std::string why = cache_dir_refusal(m_root, m_shared);
  for (const char* shard = k_shards; why.empty() && *shard != '\0'; ++shard) {
    why = cache_dir_refusal(fmt::format("{}/{}", m_root, *shard), m_shared);
  }
  return why;
}

void CacheStore::make_cache_dirs(const std::string& dir) const
{
  std::vector<std::string> chain;  // dir, its parent, ... up to the root
  for (fs::path at = dir; !at.empty(); at = at.parent_path()) {
    chain.push_back(at.string());
    if (at == m_root || at == at.parent_path()) {
      break;
    }
  }
  if (chain.back() != m_root) {
    throw std::logic_error(fmt::format("{} is not inside the cache {}", dir, m_root));
  }
  if (const fs::path above = fs::path(m_root).parent_path(); !above.empty()) {
    fs::create_directories(above);  // not the cache's: not checked
  }
  for (auto at = chain.rbegin(); at != chain.rend(); ++at) {
    if (::mkdir(at->c_str(), m_shared ? 02775 : 0755) == 0 && m_shared) {
      ::chmod(at->c_str(), 02775);  // whatever the umask: the team writes here
    }
    if (std::string why = cache_dir_refusal(*at, m_shared); !why.empty()) {
      throw std::runtime_error(why + ": nvfresh does not write there");
    }
  }
}

bool CacheStore::is_shard_dir(const std::string& dir)
{
  return lstat_file(dir).is_directory;  // a symlink to a directory is not one
}

std::string CacheStore::shard_dir(const Digest& key) const
{
  return m_root + "/" + key.to_hex().substr(0, 1);
}

std::string CacheStore::manifest_file(const Digest& key) const
{
  const std::string hex = key.to_hex();
  return fmt::format("{}/{}/{}.manifest", shard_dir(key), hex.substr(1, 2), hex);
}

std::string CacheStore::entry_file(const Digest& key) const
{
  const std::string hex = key.to_hex();
  return fmt::format("{}/{}/{}.entry", shard_dir(key), hex.substr(1, 2), hex);
}

std::string CacheStore::step_file(const Digest& key) const
{
  const std::string hex = key.to_hex();
  return fmt::format("{}/{}/{}.step", shard_dir(key), hex.substr(1, 2), hex);
}

std::optional<StepEntry> CacheStore::read_step(const Digest& key, std::string* error) const
{
  return read_stored(step_file(key), error, [&](const std::string& text) {
    auto entry = parse_step_entry(text, error);
    if (entry && entry->key != key) {
      set_error(error, fmt::format("it was stored under another key ({})", entry->key.short_hex()));
      return std::optional<StepEntry>();
    }
    return entry;
  });
}

void CacheStore::write_step(const Digest& key, StepEntry entry)
{
  entry.key = key;
  store_file(key, step_file(key), serialize_step_entry(entry), CacheCounter::step_stores);
}

void CacheStore::touch_step(const Digest& key)
{
  try {
    set_mtime_ns(step_file(key), now_ns());
  } catch (const std::exception&) {
    // a read-only cache still serves; only its LRU order is stale
  }
}

std::optional<Manifest> CacheStore::read_manifest(const Digest& key) const
{
  auto text = read_manifest_text(key);
  return text ? parse_manifest(*text) : std::nullopt;
}

std::optional<std::string> CacheStore::read_manifest_text(const Digest& key) const
{
  try {
    return try_read_compressed_file(manifest_file(key));
  } catch (const CompressedFileError&) {
    return std::nullopt;  // damaged: a miss; the next store replaces it
  }
}

void CacheStore::update_manifest(const Digest& key, const std::function<void(Manifest&)>& change)
{
  std::int64_t grown = 0;
  {
    make_cache_dirs(fs::path(manifest_file(key)).parent_path().string());
    LockedFile lock(shard_dir(key) + "/lock", m_shared);
    Manifest manifest = read_manifest(key).value_or(Manifest{});
    change(manifest);
    grown = write_counted(key, manifest_file(key), serialize_manifest(manifest));
  }
  if (grown > 0) {
    evict_if_over_cap(key);
  }
}

std::optional<CacheEntry> CacheStore::read_entry(const Digest& key, std::string* error) const
{
  return read_stored(entry_file(key), error, [&](const std::string& text) {
    auto entry = parse_cache_entry(text, error);
    if (!entry) {
      return entry;
    }
    if (std::string unbound = entry_binding_error(*entry, key); !unbound.empty()) {
      set_error(error, unbound);
      return std::optional<CacheEntry>();
    }
    return entry;
  });
}

void CacheStore::write_entry(const Digest& key, CacheEntry entry)
{
  entry.result_key = key;
  entry.object_digest = hash_bytes(entry.object);
  store_file(key, entry_file(key), serialize_cache_entry(entry), CacheCounter::stores);
}

std::string CacheStore::write_foreign_entry(const Digest& manifest_key, const Digest& key,
                                            const CacheEntry& entry)
{
  std::string refusal = foreign_entry_refusal(entry, manifest_key, key);
  if (refusal.empty()) {
    store_file(key, entry_file(key), serialize_cache_entry(entry), CacheCounter::stores);
  }
  return refusal;
}

void CacheStore::store_file(const Digest& key, const std::string& file, const std::string& text,
                            CacheCounter counter)
{
  {
    make_cache_dirs(fs::path(file).parent_path().string());
    LockedFile lock(shard_dir(key) + "/lock", m_shared);
    write_counted(key, file, text);
  }
  count(key, counter);
  evict_if_over_cap(key);
}

// Called under the shard's lock: a shard's eviction lists its files and sets its counters from
// that list under the same lock, so a file written beside it is counted exactly once.
std::int64_t CacheStore::write_counted(const Digest& key, const std::string& file,
                                       std::string_view text)
{
  if (!stat_file(m_root + "/CACHEDIR.TAG").exists) {
    write_file_atomically(m_root + "/CACHEDIR.TAG",
                          "Signature: 8a477f597d28d172789f06886806bc55\n"
                          "# nvfresh's object cache (https://bford.info/cachedir/)\n");
  }
  const FileStat before = lstat_file(file);
  write_compressed_file(file, text);
  const FileStat after = lstat_file(file);
  const std::int64_t grown = static_cast<std::int64_t>(after.size) -
                             static_cast<std::int64_t>(before.exists ? before.size : 0);
  update_counters(
    shard_dir(key) + "/stats",
    [&](CacheCounters& c) {
      c[CacheCounter::files] += before.exists ? 0 : 1;
      c[CacheCounter::bytes] += grown;
    },
    m_shared);
  return grown;
}

void CacheStore::touch_entry(const Digest& key)
{
  try {
    set_mtime_ns(entry_file(key), now_ns());
  } catch (const std::exception&) {
    // a read-only cache still serves; only its LRU order is stale
  }
}

void CacheStore::remove_entry(const Digest& key)
{
  const std::string file = entry_file(key);
  if (!lstat_file(file).exists) {
    return;
  }
  make_cache_dirs(shard_dir(key));
  LockedFile lock(shard_dir(key) + "/lock", m_shared);
  const FileStat st = lstat_file(file);
  if (st.exists && ::unlink(file.c_str()) == 0) {
    update_counters(
      shard_dir(key) + "/stats",
      [&](CacheCounters& c) {
        c[CacheCounter::files] -= 1;
        c[CacheCounter::bytes] -= static_cast<std::int64_t>(st.size);
      },
      m_shared);
  }
}

bool CacheStore::has_room() const
{
  const FileSystemSpace space = file_system_space(m_root);
  return !space.known || space.free_bytes >= m_limits.min_free;
}

void CacheStore::count(const Digest& key, CacheCounter counter, std::int64_t delta)
{
  count(key, {{counter, delta}});
}

void CacheStore::count(const Digest& key, std::initializer_list<CounterChange> changes)
{
  try {
    make_cache_dirs(shard_dir(key));
    update_counters(
      shard_dir(key) + "/stats",
      [&](CacheCounters& c) {
        for (const auto& change : changes) {
          c[change.counter] += change.delta;
        }
      },
      m_shared);
  } catch (const std::exception&) {
    // statistics are best effort
  }
}

CacheCounters CacheStore::counters() const
{
  CacheCounters total;
  for (const char* shard = k_shards; *shard != '\0'; ++shard) {
    auto text = try_read_file(fmt::format("{}/{}/stats", m_root, *shard), size_t{64} * 1024);
    CacheCounters part = parse_counters(text.value_or(""));
    for (size_t i = 0; i < total.values.size(); ++i) {
      total.values[i] += part.values[i];
    }
  }
  return total;
}

std::vector<Digest> CacheStore::entry_keys() const
{
  std::vector<Digest> keys;
  for (const char* shard = k_shards; *shard != '\0'; ++shard) {
    const std::string dir = fmt::format("{}/{}", m_root, *shard);
    if (!is_shard_dir(dir)) {
      continue;
    }
    for (const auto& file : files_of(dir)) {
      if (file.path.ends_with(".entry")) {
        if (auto key = Digest::from_hex(fs::path(file.path).stem().string())) {
          keys.push_back(*key);
        }
      }
    }
  }
  return keys;
}

std::int64_t CacheStore::evict_shard_to_share(const std::string& shard)
{
  LockedFile lock(shard + "/lock", m_shared);
  const auto share = static_cast<std::int64_t>(static_cast<double>(m_limits.max_bytes) / 16 *
                                               k_shard_fill_after_eviction);
  std::int64_t bytes = 0;
  auto files = files_of(shard);
  for (const auto& file : files) {
    bytes += static_cast<std::int64_t>(file.size);
  }
  std::int64_t removed_files = 0;
  std::int64_t removed_bytes = 0;
  for (const auto& file : files) {  // least recently used first
    if (bytes - removed_bytes <= share) {
      break;
    }
    if (::unlink(file.path.c_str()) == 0) {
      ++removed_files;
      removed_bytes += static_cast<std::int64_t>(file.size);
    }
  }
  update_counters(
    shard + "/stats",
    [&](CacheCounters& c) {
      c[CacheCounter::files] = static_cast<std::int64_t>(files.size()) - removed_files;
      c[CacheCounter::bytes] = bytes - removed_bytes;
      c[CacheCounter::evictions] += removed_files;
    },
    m_shared);
  return removed_bytes;
}

// Over the cap: the shard just written to goes down to its share, then, while the whole cache is
// still over the cap (a cap lowered, shards filled unevenly), the shards after it, one by one.
// Under the cap (every store but a few) this costs one read of the 16 counter files.
void CacheStore::evict_if_over_cap(const Digest& key)
{
  auto total = [&] {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, counters()[CacheCounter::bytes]));
  };
  if (total() <= m_limits.max_bytes) {
    return;
  }
  const std::string first = key.to_hex().substr(0, 1);
  const size_t start = std::string_view(k_shards).find(first[0]);
  for (size_t step = 0; step < 16; ++step) {
    const char shard = k_shards[(start + step) % 16];
    const std::string dir = fmt::format("{}/{}", m_root, shard);
    if (!is_shard_dir(dir)) {
      continue;
    }
    evict_shard_to_share(dir);
    if (total() <= m_limits.max_bytes) {
      return;
    }
  }
}

EvictionSummary CacheStore::evict(std::uint64_t max_bytes, std::int64_t older_than_ns)
{
  struct ShardFile {
    CachedFile file;
    std::string shard;
  };
  std::vector<ShardFile> all;
  std::map<std::string, CacheCounters> recount;
  std::list<LockedFile> locks;  // every shard's, in one order, until the counters are set
  std::uint64_t total = 0;
  for (const char* shard = k_shards; *shard != '\0'; ++shard) {
    const std::string dir = fmt::format("{}/{}", m_root, *shard);
    if (!is_shard_dir(dir)) {
      continue;
    }
    locks.emplace_back(dir + "/lock", m_shared);
    recount[dir];
    for (auto& file : files_of(dir)) {
      total += file.size;
      all.push_back({std::move(file), dir});
    }
  }
  std::sort(all.begin(), all.end(), [](const ShardFile& a, const ShardFile& b) {
    return a.file.mtime_ns < b.file.mtime_ns;
  });
  EvictionSummary summary;
  for (const auto& item : all) {
    const bool too_old = older_than_ns != 0 && item.file.mtime_ns < older_than_ns;
    if ((too_old || total > max_bytes) && ::unlink(item.file.path.c_str()) == 0) {
      total -= item.file.size;
      ++summary.files;
      summary.bytes += static_cast<std::int64_t>(item.file.size);
      recount[item.shard][CacheCounter::evictions] += 1;
      continue;
    }
    recount[item.shard][CacheCounter::files] += 1;
    recount[item.shard][CacheCounter::bytes] += static_cast<std::int64_t>(item.file.size);
  }
  for (const auto& shard : recount) {
    const CacheCounters& counts = shard.second;  // clang 14 cannot capture a structured binding
    update_counters(
      shard.first + "/stats",
      [&](CacheCounters& c) {
        c[CacheCounter::files] = counts[CacheCounter::files];
        c[CacheCounter::bytes] = counts[CacheCounter::bytes];
        c[CacheCounter::evictions] += counts[CacheCounter::evictions];
      },
      m_shared);
  }
  return summary;
}

std::string shared_hash_cache_file(const std::string& cache_root)
{
  return cache_root + "/hash-cache";
}

void CacheStore::clear()
{
  ::unlink(shared_hash_cache_file(m_root).c_str());
  for (const char* shard = k_shards; *shard != '\0'; ++shard) {
    const std::string dir = fmt::format("{}/{}", m_root, *shard);
    if (is_shard_dir(dir)) {
      LockedFile lock(dir + "/lock", m_shared);
      for (const auto& file : files_of(dir)) {
        ::unlink(file.path.c_str());
      }
      update_counters(
        dir + "/stats",
        [](CacheCounters& c) {
          c[CacheCounter::files] = 0;
          c[CacheCounter::bytes] = 0;
        },
        m_shared);
    }
  }
}

}  // namespace nvfresh
