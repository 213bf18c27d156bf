#include "space/tree_contents.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvfresh {

namespace {

struct Marker {
  std::string_view name;
  bool at_top;  // whether it counts at the tree's top too
  const char* what;
};

// A build tree's own CMakeCache.txt is at its top; a CMakeLists.txt anywhere is a source tree.
constexpr std::array<Marker, 5> k_markers{{
  {".git", true, "a git checkout"},
  {".hg", true, "a Mercurial checkout"},
  {".svn", true, "a Subversion checkout"},
  {"CMakeLists.txt", true, "a source tree"},
  {"CMakeCache.txt", false, "another build tree"},
}};

struct FileId {
  dev_t device = 0;
  ino_t inode = 0;
};

class Survey {
public:
  Survey(FileId skip, std::int64_t changed_after_ns)
    : m_skip(skip), m_changed_after_ns(changed_after_ns)
  {}

  // `fd` is the open directory `path` on `device`; takes ownership of fd.
  void directory(int fd, dev_t device, const std::string& path, bool top)
  {
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      ::close(fd);
      return;  // measure_tree reports unreadable directories
    }
    while (m_found.empty()) {
      const dirent* item = ::readdir(dir);
      if (item == nullptr) {
        break;
      }
      std::string_view name = item->d_name;
      if (name != "." && name != "..") {
        entry(::dirfd(dir), std::string(name), device, path + "/" + std::string(name), top);
      }
    }
    ::closedir(dir);
  }

  const std::string& found() const { return m_found; }

private:
  void entry(int parent, const std::string& name, dev_t device, const std::string& path, bool top)
  {
    for (const auto& marker : k_markers) {
      if (name == marker.name && (marker.at_top || !top)) {
        m_found = fmt::format("{} ({})", marker.what, path);
        return;
      }
    }
    struct stat st {};
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != device ||
        (st.st_dev == m_skip.device && st.st_ino == m_skip.inode)) {
      return;  // gone meanwhile; a mount (measure_tree reports it); the record root
    }
    if (S_ISREG(st.st_mode) && mtime_ns(st) > m_changed_after_ns) {
      m_found = fmt::format("{}, changed after its last build", path);
      return;
    }
    if (!S_ISDIR(st.st_mode)) {
      return;
    }
    int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      directory(fd, device, path, false);
    }
  }

  static std::int64_t mtime_ns(const struct stat& st)
  {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  }

  FileId m_skip;
  std::int64_t m_changed_after_ns;
  std::string m_found;
};

}  // namespace

std::string find_foreign_content(const std::string& tree, const std::string& record_root,
                                 std::int64_t last_build_ns)
{
  struct stat root {};
  FileId skip;
  if (::stat(record_root.c_str(), &root) == 0) {
    skip = {root.st_dev, root.st_ino};
  }
  int fd = ::open(tree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) {
      ::close(fd);
    }
    return fmt::format("its contents cannot be read ({})", tree);
  }
  Survey survey(skip, last_build_ns + k_changed_margin_ns);
  survey.directory(fd, st.st_dev, tree, true);
  return survey.found();
}

}  // namespace nvfresh
