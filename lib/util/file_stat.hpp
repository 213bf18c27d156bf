// What stat(2) tells about a file, as nvfresh compares it. Knows nothing about nvcc; includes
// nothing of util/ (file_io and disk_space both stand on it).
#pragma once

#include <cstdint>
#include <string>

struct stat;

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
// `name` relative to an open directory (AT_FDCWD: the working directory); follows symlinks.
FileStat stat_file_at(int directory_fd, const char* name);

// The FileStat of a stat(2) result (of a descriptor nvfresh holds open).
FileStat file_stat_from(const struct ::stat& st);

}  // namespace nvfresh
