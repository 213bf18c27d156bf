// Generic file helpers: whole-file reads, atomic writes (stat: util/file_stat). Knows nothing
// about nvcc.
#pragma once

#include "util/clock.hpp"
#include "util/file_stat.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nvfresh {

// Reads of files nvfresh does not control (records, configs, objects to compare) are bounded and
// typed: only a regular file is read (a FIFO would block for ever, /dev/zero never end), and at
// most max_bytes of it. try_read_file gives nullopt and sets errno on failure (EINVAL: not a
// regular file, EFBIG: larger than max_bytes); read_file throws std::runtime_error saying which.
inline constexpr std::uint64_t k_default_read_limit = 256ULL << 20;  // 256 MiB
// `read_from`, when given, gets the stat of the file that was read (its inode, its size then).
std::optional<std::string> try_read_file(const std::string& path,
                                         std::uint64_t max_bytes = k_default_read_limit,
                                         FileStat* read_from = nullptr);
std::string read_file(const std::string& path, std::uint64_t max_bytes = k_default_read_limit);

// The first max_bytes of a regular file (less when it is shorter); nullopt as try_read_file.
std::optional<std::string> try_read_file_prefix(const std::string& path, std::uint64_t max_bytes);

// Opens a regular file for reading without blocking on a FIFO; -1 and errno on failure (EINVAL:
// not a regular file). The caller closes it.
int open_regular_file(const std::string& path);

// Calls consume(chunk) for the rest of fd's bytes, in order, retrying on EINTR; false on a read
// error. Stops early, with true, when consume returns false.
bool read_chunks(int fd, const std::function<bool(std::string_view)>& consume);

// A write that failed: which file, and errno (ENOSPC/EDQUOT: the file system is full). On a full
// file system the message names it and how full it is: "cannot write <path>: /mnt is full (0 B
// free of 64 KiB)". What the message advises is the caller's business: only it knows what the file
// is for, and adds that with with_advice.
class FileWriteError : public std::runtime_error {
public:
  FileWriteError(const std::string& path, int error);
  const std::string& path() const { return m_path; }
  int error() const { return m_error; }
  bool disk_full() const;
  // This error with ": <advice>" appended when the disk is full; any other error unchanged.
  FileWriteError with_advice(const std::string& advice) const;

private:
  FileWriteError(const std::string& path, int error, const std::string& message);
  std::string m_path;
  int m_error;
};

// Writes all of `content` at `offset` of fd (pwrite, retried on EINTR and short writes); false with
// errno set when a write fails.
bool pwrite_all(int fd, std::string_view content, std::uint64_t offset);

// Writes to "<path>.nvfresh-tmp.<pid>.<n>" and renames over path. Throws FileWriteError naming
// path (not its temporary) on failure; the temp file is removed. SIGINT, SIGTERM, SIGHUP and
// SIGQUIT are held while it runs (delivered when it is done), so that a stopped build never leaves
// the temporary file behind.
void write_file_atomically(const std::string& path, std::string_view content);

// Creates dir and its missing parents; throws FileWriteError on failure.
void make_directories(const std::string& dir);

// Sets a file's mtime (atime left alone). Throws on failure.
void set_mtime_ns(const std::string& path, std::int64_t mtime_ns);

// Creates the file if needed and sets its times to "now" as the file system's own clock says it
// (UTIME_NOW): comparable with every other timestamp the build tool sees, unlike a time taken
// from CLOCK_REALTIME, which can be a clock tick ahead of the file system's. Throws on failure.
void touch_file(const std::string& path);

std::string absolute_path(const std::string& path, const std::string& base_dir);  // lexical
std::string lexically_normal(const std::string& path);
// Whether `path` is `dir` or lies below it, by their spelling (both absolute and normal).
bool is_within(const std::string& path, const std::string& dir);
std::string current_directory();  // $PWD when it names the cwd (keeps symlinks), else getcwd

}  // namespace nvfresh
