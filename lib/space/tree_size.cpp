#include "space/tree_size.hpp"

#include <set>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvfresh {

namespace {

class Walk {
public:
  Walk(TreeSize& size, const SizeProgress& progress) : m_size(size), m_progress(progress) {}

  void count(const struct stat& st)
  {
    if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) &&
        !m_linked.insert({st.st_dev, st.st_ino}).second) {
      return;
    }
    m_size.bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
    if (++m_size.entries % k_size_progress_entries == 0 && m_progress) {
      m_progress(m_size);
    }
  }

  // `fd` is an open directory on device `device`, named `path`; takes ownership of fd.
  void directory(int fd, dev_t device, const std::string& path)
  {
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      ::close(fd);
      note_unreadable(path);
      return;
    }
    while (const dirent* item = ::readdir(dir)) {
      std::string name = item->d_name;
      if (name != "." && name != "..") {
        std::string child = path;
        child.append("/").append(name);
        entry(::dirfd(dir), name, device, child);
      }
    }
    ::closedir(dir);
  }

private:
  void entry(int parent, const std::string& name, dev_t device, const std::string& path)
  {
    struct stat st {};
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return;  // removed while we looked
    }
    if (st.st_dev != device) {
      if (m_size.mount_inside.empty()) {
        m_size.mount_inside = path;
      }
      return;
    }
    count(st);
    if (!S_ISDIR(st.st_mode)) {
      return;
    }
    int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      note_unreadable(path);
      return;
    }
    directory(fd, device, path);
  }

  void note_unreadable(const std::string& path)
  {
    if (m_size.unreadable.empty()) {
      m_size.unreadable = path;
    }
  }

  TreeSize& m_size;
  const SizeProgress& m_progress;
  std::set<std::pair<dev_t, ino_t>> m_linked;
};

}  // namespace

TreeSize measure_tree(const std::string& dir, const SizeProgress& progress)
{
  TreeSize size;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) {
      ::close(fd);
    }
    return size;
  }
  size.exists = true;
  Walk walk(size, progress);
  walk.count(st);
  walk.directory(fd, st.st_dev, dir);
  return size;
}

}  // namespace nvfresh
