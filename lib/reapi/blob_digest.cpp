#include "reapi/blob_digest.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace nvfresh::reapi {

namespace {

class Sha256 {
public:
  Sha256() : m_context(EVP_MD_CTX_new(), &EVP_MD_CTX_free)
  {
    if (!m_context || EVP_DigestInit_ex(m_context.get(), EVP_sha256(), nullptr) != 1) {
      throw std::runtime_error("SHA-256: OpenSSL could not start a digest");
    }
  }
  void update(const void* data, size_t size)
  {
    if (EVP_DigestUpdate(m_context.get(), data, size) != 1) {
      throw std::runtime_error("SHA-256: OpenSSL could not digest");
    }
  }
  std::string hex()
  {
    std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(m_context.get(), hash.data(), &length) != 1) {
      throw std::runtime_error("SHA-256: OpenSSL could not finish a digest");
    }
    std::string text;
    text.reserve(static_cast<size_t>(length) * 2);
    for (unsigned int i = 0; i < length; ++i) {
      text += fmt::format("{:02x}", hash[i]);
    }
    return text;
  }

private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> m_context;
};

}  // namespace

BlobDigest digest_of(std::string_view bytes)
{
  Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  return {sha.hex(), static_cast<std::int64_t>(bytes.size())};
}

BlobDigest digest_of_file(const std::string& path)
{
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  Sha256 sha;
  std::int64_t size = 0;
  std::array<char, 1 << 16> buffer{};
  while (true) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(error)));
    }
    if (got == 0) {
      break;
    }
    sha.update(buffer.data(), static_cast<size_t>(got));
    size += got;
  }
  ::close(fd);
  return {sha.hex(), size};
}

namespace {

// An exclusive flock on `file` (created if need be) for as long as it lives; none when the file
// cannot be opened (then the cache goes on unlocked: at worst a file is hashed twice).
class CacheLock {
public:
  explicit CacheLock(const std::string& file)
    : m_fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644))
  {
    while (m_fd >= 0 && ::flock(m_fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~CacheLock()
  {
    if (m_fd >= 0) {
      ::close(m_fd);  // releases the lock
    }
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

private:
  int m_fd;
};

}  // namespace

DigestCache::DigestCache(std::string file) : m_file(std::move(file))
{
  merge_file();
}

void DigestCache::merge_file()
{
  std::ifstream in(m_file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string path;
    Entry entry;
    if (std::getline(fields, path, '\t') &&
        (fields >> entry.stamp.device >> entry.stamp.inode >> entry.stamp.size >>
         entry.stamp.mtime_ns >> entry.stamp.ctime_ns >> entry.hash) &&
        entry.hash.size() == 64) {
      m_entries.try_emplace(path, std::move(entry));
    }
  }
}

bool DigestCache::stamp_of(const std::string& path, Stamp& stamp)
{
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return false;
  }
  constexpr std::int64_t k_ns = 1'000'000'000;
  stamp = {static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
           static_cast<std::int64_t>(info.st_size),
           info.st_mtim.tv_sec * k_ns + info.st_mtim.tv_nsec,
           info.st_ctim.tv_sec * k_ns + info.st_ctim.tv_nsec};
  return true;
}

BlobDigest DigestCache::digest_of_file(const std::string& path)
{
  Stamp before;
  if (!stamp_of(path, before) || before.size < k_min_size) {
    return reapi::digest_of_file(path);
  }
  // The file's entry, or another path's of the same file (the same device, inode and times: a
  // toolkit reached through /usr/local/cuda and /usr/local/cuda-13.0), then kept for this path too.
  auto kept = [&]() -> std::optional<BlobDigest> {
    auto found = m_entries.find(path);
    if (found != m_entries.end() && found->second.stamp == before) {
      return BlobDigest{found->second.hash, before.size};
    }
    const auto same_file = std::find_if(m_entries.begin(), m_entries.end(), [&](const auto& item) {
      return item.second.stamp == before;
    });
    if (same_file == m_entries.end()) {
      return std::nullopt;
    }
    BlobDigest digest{same_file->second.hash, before.size};
    m_entries[path] = Entry{before, digest.hash};
    m_changed = true;
    return digest;
  };
  if (auto digest = kept()) {
    return *digest;
  }
  // Another process may be hashing it now: wait for it under the lock and take its entry.
  const CacheLock lock(m_file + ".lock");
  m_entries.erase(path);  // stale, if any: the file's entry is read again
  merge_file();
  if (auto digest = kept()) {
    return *digest;
  }
  BlobDigest digest = reapi::digest_of_file(path);
  Stamp after;
  const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  if (stamp_of(path, after) && after == before && digest.size == before.size &&
      before.mtime_ns < now_ns - 1'000'000'000 && before.ctime_ns < now_ns - 1'000'000'000) {
    m_entries[path] = {before, digest.hash};
    m_changed = true;
    write_merged();
  }
  return digest;
}

void DigestCache::save()
{
  if (!m_changed || m_file.empty()) {
    return;
  }
  const CacheLock lock(m_file + ".lock");
  write_merged();
}

void DigestCache::write_merged()
{
  if (m_file.empty()) {
    return;
  }
  merge_file();  // another process's entries since this cache read the file stay
  // Unique to the thread too: `nvfresh-remote serve` answers a compile's calls on threads of one
  // process, and two saving at once must not write one temporary file.
  const std::string temporary = fmt::format(
    "{}.tmp.{}.{:x}", m_file, ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(temporary, std::ios::trunc);
    for (const auto& [path, entry] : m_entries) {
      if (path.find_first_of("\t\n") != std::string::npos) {
        continue;
      }
      out << path << '\t' << entry.stamp.device << '\t' << entry.stamp.inode << '\t'
          << entry.stamp.size << '\t' << entry.stamp.mtime_ns << '\t' << entry.stamp.ctime_ns
          << '\t' << entry.hash << '\n';
    }
    if (!out.flush()) {
      std::remove(temporary.c_str());
      return;
    }
  }
  if (std::rename(temporary.c_str(), m_file.c_str()) != 0) {
    std::remove(temporary.c_str());
    return;
  }
  m_changed = false;
}

}  // namespace nvfresh::reapi
