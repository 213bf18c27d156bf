// Generic file helpers: whole-file reads, atomic writes, stat. Knows nothing about nvcc.
#pragma once

#include "util/clock.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

// What stat tells about a file; the fields the freshness shortcut compares.
struct FileStat {
  bool exists = false;
  bool is_regular = false;
  bool is_directory = false;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  bool same_content_stamp(const FileStat& other) const;  // size, mtime, ctime, inode, device
};

FileStat stat_file(const std::string& path);   // follows symlinks; exists=false when absent
FileStat lstat_file(const std::string& path);  // does not follow symlinks

// Throws std::runtime_error with the path and strerror on failure.
std::string read_file(const std::string& path);
std::optional<std::string> try_read_file(const std::string& path);

// Writes to "<path>.nvfresh-tmp.<pid>.<n>" and renames over path. Throws on failure (the temp file
// is removed); a full disk is reported as such, with the path and what to do.
void write_file_atomically(const std::string& path, std::string_view content);

// Sets a file's mtime (atime left alone). Throws on failure.
void set_mtime_ns(const std::string& path, std::int64_t mtime_ns);

// Creates the file if needed and sets its times to "now" as the file system's own clock says it
// (UTIME_NOW): comparable with every other timestamp the build tool sees, unlike a time taken
// from CLOCK_REALTIME, which can be a clock tick ahead of the file system's. Throws on failure.
void touch_file(const std::string& path);

std::string absolute_path(const std::string& path, const std::string& base_dir);  // lexical
std::string lexically_normal(const std::string& path);
std::string current_directory();  // $PWD when it names the cwd (keeps symlinks), else getcwd

}  // namespace nvfresh
