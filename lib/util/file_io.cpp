#include "util/file_io.hpp"

#include "util/disk_space.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvfresh {

namespace {

std::string describe_write_error(const std::string& path, int error)
{
  if (error == ENOSPC) {
    return fmt::format("cannot write {}: {}", path, describe_full(file_system_space(path)));
  }
  if (error == EDQUOT) {
    return fmt::format("cannot write {}: your disk quota on {} is used up ({})", path,
                       file_system_space(path).mount_point, std::strerror(error));
  }
  return fmt::format("cannot write {}: {}", path, std::strerror(error));
}

void write_all(int fd, std::string_view content, const std::string& path)
{
  while (!content.empty()) {
    ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written < 0) {
      throw FileWriteError(path, errno);
    }
    content.remove_prefix(static_cast<size_t>(written));
  }
}

}  // namespace

bool pwrite_all(int fd, std::string_view content, std::uint64_t offset)
{
  while (!content.empty()) {
    const ssize_t written =
      ::pwrite(fd, content.data(), content.size(), static_cast<off_t>(offset));
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written <= 0) {
      errno = written == 0 ? EIO : errno;
      return false;
    }
    content.remove_prefix(static_cast<size_t>(written));
    offset += static_cast<std::uint64_t>(written);
  }
  return true;
}

FileWriteError::FileWriteError(const std::string& path, int error)
  : FileWriteError(path, error, describe_write_error(path, error))
{}

FileWriteError::FileWriteError(const std::string& path, int error, const std::string& message)
  : std::runtime_error(message), m_path(path), m_error(error)
{}

bool FileWriteError::disk_full() const
{
  return m_error == ENOSPC || m_error == EDQUOT;
}

FileWriteError FileWriteError::with_advice(const std::string& advice) const
{
  if (!disk_full()) {
    return *this;
  }
  return FileWriteError(m_path, m_error, fmt::format("{}: {}", what(), advice));
}

namespace {

// open_regular_file, with the file's stat when it opened.
int open_regular_file_stat(const std::string& path, struct stat& st)
{
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return -1;
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

}  // namespace

int open_regular_file(const std::string& path)
{
  struct stat st {};
  return open_regular_file_stat(path, st);
}

bool read_chunks(int fd, const std::function<bool(std::string_view)>& consume)
{
  // On the heap, not thread_local: a thread_local array is part of every thread's static TLS,
  // which pthread_create zeroes (32 pages each for the stat threads of a skip, which read nothing).
  constexpr size_t k_chunk = size_t{1} << 17;
  const std::unique_ptr<char[]> buffer(new char[k_chunk]);
  for (;;) {
    ssize_t n = ::read(fd, buffer.get(), k_chunk);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return false;
    }
    if (n == 0 || !consume(std::string_view(buffer.get(), static_cast<size_t>(n)))) {
      return true;
    }
  }
}

namespace {

// Reads straight into the string, sized by fstat (a record: no copy through a buffer, no pages
// faulted in twice); a file that grew since is read on in chunks, to max_bytes.
std::optional<std::string> read_bounded(const std::string& path, std::uint64_t max_bytes,
                                        bool fail_when_longer, FileStat* read_from)
{
  struct stat st {};
  int fd = open_regular_file_stat(path, st);
  if (fd < 0) {
    return std::nullopt;
  }
  if (read_from != nullptr) {
    *read_from = file_stat_from(st);
  }
  std::string content(
    static_cast<size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), max_bytes)),
    '\0');
  size_t filled = 0;
  bool ok = true;
  bool at_end = false;  // the file ended before its stated size (it shrank)
  while (filled < content.size()) {
    const ssize_t n = ::read(fd, content.data() + filled, content.size() - filled);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ok = n == 0;
      at_end = true;
      break;
    }
    filled += static_cast<size_t>(n);
  }
  content.resize(filled);
  bool too_long = false;
  if (ok && !at_end) {
    ok = read_chunks(fd, [&](std::string_view chunk) {
      const std::uint64_t room = max_bytes - content.size();
      content.append(
        chunk.substr(0, static_cast<size_t>(std::min<std::uint64_t>(room, chunk.size()))));
      too_long = chunk.size() > room;
      return !too_long;
    });
  }
  int error = errno;
  ::close(fd);
  if (!ok || (too_long && fail_when_longer)) {
    errno = ok ? EFBIG : error;
    return std::nullopt;
  }
  return content;
}

}  // namespace

std::optional<std::string> try_read_file(const std::string& path, std::uint64_t max_bytes,
                                         FileStat* read_from)
{
  return read_bounded(path, max_bytes, true, read_from);
}

std::optional<std::string> try_read_file_prefix(const std::string& path, std::uint64_t max_bytes)
{
  return read_bounded(path, max_bytes, false, nullptr);
}

std::string read_file(const std::string& path, std::uint64_t max_bytes)
{
  auto content = try_read_file(path, max_bytes);
  if (!content) {
    const int error = errno;
    if (error == EINVAL) {
      throw std::runtime_error(fmt::format("cannot read {}: not a regular file", path));
    }
    if (error == EFBIG) {
      throw std::runtime_error(
        fmt::format("cannot read {}: larger than {} bytes", path, max_bytes));
    }
    throw std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(error)));
  }
  return *content;
}

namespace {

// Puts `temp` in place of an existing file at `path`; false (nothing changed) when there is none,
// or the file system cannot swap names, or `path` is a directory: then rename() does the job, and
// fails where it must. A rename over an existing file makes ext4 (auto_da_alloc) start writing the
// new file's blocks at once: 0.1-0.3 ms for a record, on every skip. Swapping the two names
// (RENAME_EXCHANGE, just as atomic for readers) and removing the old file does not. Either way a
// crash may leave the file short: every reader of nvfresh's files treats that as absent (a record:
// stale, compile again).
bool exchange_into_place(const std::string& temp, const std::string& path)
{
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) != 0) {
    return false;
  }
  if (::unlink(temp.c_str()) == 0) {
    return true;
  }
  // `path` held something unlink cannot remove (a directory): swap back, for rename() to refuse.
  ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE);
  return false;
}

// The signals a build tool stops a build with (Ctrl-C through ninja or make, a CI timeout) held
// back while a file is written and put in place: one that came in between the temporary file's
// creation and its rename would end the process there and leave "<path>.nvfresh-tmp.*" in the
// build tree (test_faults f06 saw a link record's). A held signal is delivered, and ends the
// process, as soon as the write is done or undone.
class TerminatingSignalsHeld {
public:
  TerminatingSignalsHeld()
  {
    sigset_t held;
    sigemptyset(&held);
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      sigaddset(&held, signal_number);
    }
    m_held = ::pthread_sigmask(SIG_BLOCK, &held, &m_previous) == 0;
  }
  ~TerminatingSignalsHeld()
  {
    if (m_held) {
      ::pthread_sigmask(SIG_SETMASK, &m_previous, nullptr);
    }
  }
  TerminatingSignalsHeld(const TerminatingSignalsHeld&) = delete;
  TerminatingSignalsHeld& operator=(const TerminatingSignalsHeld&) = delete;

private:
  sigset_t m_previous{};
  bool m_held = false;
};

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content)
{
  const TerminatingSignalsHeld held;
  static std::atomic<unsigned> counter{0};
  std::string temp = fmt::format("{}.nvfresh-tmp.{}.{}", path, ::getpid(), counter++);
  // Never through a link planted at the temporary name (another user of a shared cache dir could
  // plant one to make us write their file).
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) {
    throw FileWriteError(path, errno);
  }
  try {
    write_all(fd, content, path);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    throw FileWriteError(path, error);
  }
  if (!exchange_into_place(temp, path) && ::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    throw FileWriteError(path, error);
  }
}

void make_directories(const std::string& dir)
{
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw FileWriteError(dir, error.value());
  }
}

void set_mtime_ns(const std::string& path, std::int64_t mtime_ns)
{
  timespec times[2];
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;
  times[1].tv_sec = mtime_ns / 1'000'000'000;
  times[1].tv_nsec = mtime_ns % 1'000'000'000;
  if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) {
    throw std::runtime_error(
      fmt::format("cannot set the mtime of {}: {}", path, std::strerror(errno)));
  }
}

void touch_file(const std::string& path)
{
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  }
  ::close(fd);
  if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) != 0) {
    throw std::runtime_error(fmt::format("cannot touch {}: {}", path, std::strerror(errno)));
  }
}

std::string lexically_normal(const std::string& path)
{
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') {
    normal.pop_back();
  }
  return normal;
}

bool is_within(const std::string& path, const std::string& dir)
{
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

std::string absolute_path(const std::string& path, const std::string& base_dir)
{
  if (!path.empty() && path.front() == '/') {
    return lexically_normal(path);
  }
  return lexically_normal(base_dir + "/" + path);
}

std::string current_directory()
{
  std::string real = std::filesystem::current_path().string();
  const char* pwd = std::getenv("PWD");
  if (pwd != nullptr && pwd[0] == '/') {
    FileStat a = stat_file(pwd);
    FileStat b = stat_file(real);
    if (a.exists && a.inode == b.inode && a.device == b.device) {
      return lexically_normal(pwd);
    }
  }
  return real;
}

}  // namespace nvfresh
