#include "util/file_stat.hpp"

#include <sys/stat.h>

namespace nvfresh {

namespace {

std::int64_t to_ns(const timespec& ts)
{
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

FileStat file_stat_from(const struct ::stat& st)
{
  FileStat result;
  result.exists = true;
  result.is_regular = S_ISREG(st.st_mode);
  result.is_directory = S_ISDIR(st.st_mode);
  result.size = static_cast<std::uint64_t>(st.st_size);
  result.mtime_ns = to_ns(st.st_mtim);
  result.ctime_ns = to_ns(st.st_ctim);
  result.inode = st.st_ino;
  result.device = st.st_dev;
  return result;
}

bool FileStat::same_content_stamp(const FileStat& other) const
{
  return exists == other.exists && size == other.size && mtime_ns == other.mtime_ns &&
         ctime_ns == other.ctime_ns && inode == other.inode && device == other.device;
}

FileStat stat_file(const std::string& path)
{
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return {};
  }
  return file_stat_from(st);
}

FileStat stat_file_at(int directory_fd, const char* name)
{
  struct stat st {};
  if (::fstatat(directory_fd, name, &st, 0) != 0) {
    return {};
  }
  return file_stat_from(st);
}

FileStat lstat_file(const std::string& path)
{
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return {};
  }
  return file_stat_from(st);
}

}  // namespace nvfresh
