// How full a file system is: free and total space of the file system holding a path (statvfs), the
// directory it is mounted on, and sizes written for people ("3.1 GiB"). Knows nothing about nvcc.
#pragma once

#include <cstdint>
#include <string>

namespace nvfresh {

struct FileSystemSpace {
  bool known = false;        // false: no existing ancestor of the path could be examined
  std::string mount_point;   // the directory the file system is mounted on ("/", "/tmp", ...)
  std::uint64_t device = 0;  // st_dev: tells file systems apart
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;  // what an unprivileged user may still write (df's "Avail")
  std::uint64_t used_bytes = 0;
  std::uint64_t total_inodes = 0;  // 0: the file system does not count inodes
  std::uint64_t free_inodes = 0;

  double used_percent() const;  // as df computes it: used / (used + free)
  bool out_of_inodes() const { return total_inodes != 0 && free_inodes == 0; }
};

// The file system of `path`, or of its nearest existing ancestor when `path` does not exist (yet).
FileSystemSpace file_system_space(const std::string& path);

// The nearest directory at or above `path` that exists ("/" at worst); lexical, relative to cwd.
std::string nearest_existing_directory(const std::string& path);

// Binary units, with one decimal below 10: "0 B", "512 B", "3.1 GiB", "64 KiB", "900 GiB".
std::string format_size(std::uint64_t bytes);

// "<mount point> is full (0 B free of 20 GiB)": the words nvfresh uses for a write that found no
// room, wherever the file is.
std::string describe_full(const FileSystemSpace& space);

}  // namespace nvfresh
