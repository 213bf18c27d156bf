#include "util/batch_stat.hpp"

#include "util/parallel.hpp"
#include "util/string_hash.hpp"

#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr int k_cannot_open = -1;
constexpr std::size_t k_by_path = static_cast<std::size_t>(-1);

// A path split at its last '/': the directory ("/" for "/x") and the name after it. A path without
// a directory, or ending in '/', is stat'ed whole.
struct SplitPath {
  std::string_view directory;
  std::size_t name_offset = 0;
  bool whole = true;
};

SplitPath split_path(const std::string& path)
{
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) {
    return {};
  }
  return {std::string_view(path).substr(0, slash == 0 ? 1 : slash), slash + 1, false};
}

// The open directories, opened here, by this thread, before any worker starts: growing the file
// table past its first 64 descriptors in a process with other threads makes the kernel wait for
// an RCU grace period (expand_fdtable), 20 ms on the 16-core machine, more than the stats take.
// Closed on destruction.
class DirectoryHandles {
public:
  explicit DirectoryHandles(const std::vector<std::string>& directories)
  {
    m_fds.reserve(directories.size());
    for (const auto& directory : directories) {
      const int fd = ::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      m_fds.push_back(fd < 0 ? k_cannot_open : fd);
    }
  }
  ~DirectoryHandles()
  {
    for (const int fd : m_fds) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
  }
  DirectoryHandles(const DirectoryHandles&) = delete;
  DirectoryHandles& operator=(const DirectoryHandles&) = delete;

  // The directory's descriptor, or k_cannot_open (then its files are stat'ed by path, which
  // gives the answer stat() gives, whatever made the open fail).
  int fd(std::size_t index) const { return m_fds[index]; }

private:
  std::vector<int> m_fds;
};

}  // namespace

std::vector<FileStat> stat_files(const std::vector<const std::string*>& paths,
                                 const BatchStatLimits& limits)
{
  // Directories holding two files or more get a handle (for one file, opening it costs the walk
  // it would save), as many as the limit allows, in the order they are met.
  struct Directory {
    std::size_t files = 0;
    std::size_t handle = k_by_path;
  };
  std::vector<SplitPath> splits(paths.size());
  std::vector<Directory*> directory_of(paths.size(), nullptr);
  StringViewMap<Directory> by_name;  // its nodes do not move
  for (std::size_t i = 0; i < paths.size(); ++i) {
    splits[i] = split_path(*paths[i]);
    if (!splits[i].whole) {
      directory_of[i] = &by_name[splits[i].directory];
      ++directory_of[i]->files;
    }
  }
  std::vector<std::string> directories;
  std::vector<std::size_t> handle(paths.size(), k_by_path);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    Directory* directory = directory_of[i];
    if (directory == nullptr || directory->files < 2) {
      continue;
    }
    if (directory->handle == k_by_path && directories.size() < limits.max_directories) {
      directory->handle = directories.size();
      directories.emplace_back(splits[i].directory);
    }
    handle[i] = directory->handle;
  }
  const DirectoryHandles handles(directories);
  std::vector<FileStat> stats(paths.size());
  for_each_index_on_threads(
    paths.size(), limits.per_thread, limits.max_threads, [&](std::size_t i) {
      const int fd = handle[i] == k_by_path ? k_cannot_open : handles.fd(handle[i]);
      stats[i] = fd >= 0 ? stat_file_at(fd, paths[i]->c_str() + splits[i].name_offset)
                         : stat_file(*paths[i]);
    });
  return stats;
}

}  // namespace nvfresh
