// Cache file grammar (one entry per line, fields separated by TAB, newest entry for a path wins):
//   entry := hex32 TAB size TAB mtime_ns TAB ctime_ns TAB inode TAB device TAB path LF
// A line that does not parse is ignored (the file is a cache: losing it only costs hashing).
#include "freshness/file_hasher.hpp"

#include "util/batch_stat.hpp"
#include "util/hasher.hpp"
#include "util/parallel.hpp"
#include "util/text_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr int k_stable_attempts = 3;
constexpr size_t k_max_threads = 8;  // past this the kernel's path walks contend
constexpr size_t k_max_open_directories = 256;
constexpr std::uint64_t k_cache_compaction_size = std::uint64_t{4} * 1024 * 1024;

std::vector<std::string_view> split_tabs(std::string_view line, size_t max_fields)
{
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < max_fields) {
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      break;
    }
    fields.push_back(line.substr(0, tab));
    line.remove_prefix(tab + 1);
  }
  fields.push_back(line);
  return fields;
}

}  // namespace

FileHasher::FileHasher(std::string cache_file, std::int64_t settle_ns,
                       std::string shared_cache_file)
  : m_cache_file(std::move(cache_file)), m_shared_cache_file(std::move(shared_cache_file)),
    m_settle_ns(settle_ns)
{}

FileHasher::DiskCache FileHasher::load_cache_file(const std::string& file)
{
  DiskCache cache;
  auto text = file.empty() ? std::nullopt : try_read_file(file);
  if (!text) {
    return cache;
  }
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t end = std::min(rest.find('\n'), rest.size());
    auto f = split_tabs(rest.substr(0, end), 7);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    CacheEntry entry;
    auto hash = f.size() == 7 ? Digest::from_hex(f[0]) : std::nullopt;
    entry.stat.exists = true;
    if (hash && parse_number(f[1], entry.stat.size) && parse_number(f[2], entry.stat.mtime_ns) &&
        parse_number(f[3], entry.stat.ctime_ns) && parse_number(f[4], entry.stat.inode) &&
        parse_number(f[5], entry.stat.device)) {
      entry.hash = *hash;
      cache[std::string(f[6])] = entry;
    }
  }
  if (text->size() > k_cache_compaction_size) {
    std::string compacted;
    for (const auto& [path, e] : cache) {
      compacted += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", e.hash.to_hex(), e.stat.size,
                               e.stat.mtime_ns, e.stat.ctime_ns, e.stat.inode, e.stat.device, path);
    }
    try {
      write_file_atomically(file, compacted);
    } catch (const std::exception&) {
      // a cache that cannot be compacted is still a valid cache
    }
  }
  return cache;
}

void FileHasher::load_cache()
{
  m_cache_loaded = true;
  m_disk_cache = load_cache_file(m_cache_file);
  m_shared_cache = load_cache_file(m_shared_cache_file);
}

std::optional<Digest> FileHasher::cached_hash(const std::string& path, const FileStat& stat) const
{
  for (const DiskCache* cache : {&m_disk_cache, &m_shared_cache}) {
    auto entry = cache->find(path);
    if (entry == cache->end()) {
      continue;
    }
    if (entry->second.stat.same_content_stamp(stat)) {
      return entry->second.hash;
    }
  }
  return std::nullopt;
}

void FileHasher::remember(const std::string& path, const FileStat& stat, const Digest& hash)
{
  const bool shared = !m_shared_cache_file.empty();
  (shared ? m_shared_cache : m_disk_cache)[path] = {stat, hash};
  const std::string& file = shared ? m_shared_cache_file : m_cache_file;
  if (file.empty() || path.find('\n') != std::string::npos) {
    return;
  }
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), error);
  // Never through a symlink: the shared hash cache lies in the cache dir, where another user could
  // plant a link to a file of ours.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) {
    return;
  }
  std::string line = fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", hash.to_hex(), stat.size,
                                 stat.mtime_ns, stat.ctime_ns, stat.inode, stat.device, path);
  [[maybe_unused]] ssize_t ignored = ::write(fd, line.data(), line.size());
  ::close(fd);
}

std::string_view FileHasher::kept_key(std::string_view path)
{
  constexpr std::size_t k_block = std::size_t{64} * 1024;
  if (path.size() > m_key_room) {
    const std::size_t size = std::max(k_block, path.size());
    m_key_blocks.emplace_back(new char[size]);  // not zeroed: each byte is copied before use
    m_key_next = m_key_blocks.back().get();
    m_key_room = size;
  }
  std::copy(path.begin(), path.end(), m_key_next);
  const std::string_view kept(m_key_next, path.size());
  m_key_next += path.size();
  m_key_room -= path.size();
  return kept;
}

void FileHasher::memo_stat(std::string_view path, const FileStat& stat)
{
  if (auto known = m_stat_memo.find(path); known != m_stat_memo.end()) {
    known->second = stat;
    return;
  }
  m_stat_memo.emplace(kept_key(path), stat);
}

FileStat FileHasher::stat(const std::string& path)
{
  auto memo = m_stat_memo.find(path);
  if (memo != m_stat_memo.end()) {
    return memo->second;
  }
  const FileStat now = stat_file(path);
  m_stat_memo.emplace(kept_key(path), now);
  return now;
}

std::vector<FileStat> FileHasher::stat_ahead(const std::vector<const std::string*>& paths)
{
  std::vector<FileStat> result(paths.size());
  std::vector<const std::string*> wanted;
  std::vector<size_t> wanted_at;
  wanted.reserve(paths.size());
  wanted_at.reserve(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    auto known = m_stat_memo.empty() ? m_stat_memo.end() : m_stat_memo.find(*paths[i]);
    if (known != m_stat_memo.end()) {
      result[i] = known->second;
    } else {
      wanted.push_back(paths[i]);
      wanted_at.push_back(i);
    }
  }
  const std::vector<FileStat> stats =
    stat_files(wanted, {k_paths_per_stat_thread, k_max_threads, k_max_open_directories});
  m_stat_memo.reserve(m_stat_memo.size() + wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) {
    // A path given twice is memoized once (its second key copy stays unused).
    result[wanted_at[i]] = m_stat_memo.emplace(kept_key(*wanted[i]), stats[i]).first->second;
  }
  return result;
}

void FileHasher::hash_ahead(const std::vector<const std::string*>& paths)
{
  struct Wanted {
    const std::string* path;
    std::uint64_t size;
  };
  std::vector<Wanted> wanted;
  for (const std::string* path : paths) {
    auto known = m_stat_memo.find(*path);
    if (known == m_stat_memo.end() || m_memo.contains(*path) || m_prehashed.contains(*path)) {
      continue;
    }
    const FileStat& s = known->second;
    auto seed = m_seeds.find(*path);
    const bool seeded = seed != m_seeds.end() && seed->second.same_stamp_as(s);
    if (!s.exists || !s.is_regular || seeded) {
      continue;
    }
    if (s.size >= k_cached_size_threshold) {
      // fingerprint() takes a big file's hash from the cache when its stamp is there: hashed
      // ahead only when it is not (a CUTLASS TU with every header touched has two of 1 MB).
      if (!m_cache_loaded) {
        load_cache();
      }
      if (cached_hash(*path, s)) {
        continue;
      }
    }
    wanted.push_back({path, s.size});
  }
  // The biggest first: the threads take files one by one, so the long ones do not come last.
  std::stable_sort(wanted.begin(), wanted.end(),
                   [](const Wanted& a, const Wanted& b) { return a.size > b.size; });
  std::vector<Prehashed> hashed(wanted.size());
  for_each_index_on_threads(wanted.size(), k_paths_per_hash_thread, k_max_threads, [&](size_t i) {
    hashed[i].hash = hash_file(*wanted[i].path);
    hashed[i].after = stat_file(*wanted[i].path);
  });
  for (size_t i = 0; i < wanted.size(); ++i) {
    m_prehashed.emplace(*wanted[i].path, hashed[i]);
  }
}

void FileHasher::seed(const std::vector<FileFingerprint>& known)
{
  for (const auto& file : known) {
    m_seeds.insert_or_assign(file.path, file);
  }
}

FingerprintResult FileHasher::fingerprint(const std::string& path)
{
  auto memo = m_memo.find(path);
  if (memo != m_memo.end()) {
    return memo->second;
  }
  if (!m_cache_loaded) {
    load_cache();
  }
  FingerprintResult result;
  for (int attempt = 0; attempt < k_stable_attempts; ++attempt) {
    // The first attempt takes a stat this hasher already made (a skip's, before the cache lookup):
    // the stat after the hash below still tells whether the file moved since.
    auto known_stat = attempt == 0 ? m_stat_memo.find(path) : m_stat_memo.end();
    result.stat = known_stat != m_stat_memo.end() ? known_stat->second : stat_file(path);
    if (!result.stat.exists || !result.stat.is_regular) {
      return m_memo[path] = result;
    }
    if (auto seed = m_seeds.find(path); seed != m_seeds.end() && attempt == 0) {
      if (seed->second.same_stamp_as(result.stat)) {
        result.fingerprint = seed->second;
        memo_stat(path, result.stat);
        return m_memo[path] = result;
      }
    }
    auto hash = cached_hash(path, result.stat);
    bool from_cache = hash.has_value();
    auto prehashed = attempt == 0 && known_stat != m_stat_memo.end() && !hash
                       ? m_prehashed.find(path)
                       : m_prehashed.end();
    FileStat after;
    if (prehashed != m_prehashed.end()) {
      hash = prehashed->second.hash;
      after = prehashed->second.after;
    } else {
      if (!hash) {
        hash = hash_file(path);
      }
      after = stat_file(path);
    }
    if (hash && after.same_content_stamp(result.stat)) {
      bool settled = now_ns() - result.stat.ctime_ns >= m_settle_ns;
      if (!from_cache && settled && result.stat.size >= k_cached_size_threshold) {
        remember(path, result.stat, *hash);
      }
      const FileStat& s = result.stat;
      result.fingerprint = FileFingerprint{path, *hash, s.size, s.mtime_ns, s.ctime_ns, s.inode};
      result.unstable = false;
      memo_stat(path, s);
      return m_memo[path] = result;
    }
    result.unstable = hash.has_value();
  }
  return m_memo[path] = result;
}

bool FileHasher::unchanged(const FileFingerprint& recorded, std::optional<FileFingerprint>* now)
{
  if (recorded.same_stamp_as(stat(recorded.path))) {
    return true;
  }
  auto result = fingerprint(recorded.path);
  if (now != nullptr) {
    *now = result.fingerprint;
  }
  return result.fingerprint && result.fingerprint->hash == recorded.hash;
}

}  // namespace nvfresh
