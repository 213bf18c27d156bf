#include "util/batch_stat.hpp"

#include "util/parallel.hpp"
#include "util/string_hash.hpp"

#include <algorithm>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace nvfresh {

namespace {

constexpr int k_cannot_open = -1;
constexpr int k_open_flags = O_PATH | O_DIRECTORY | O_CLOEXEC;

// Paths in the order of a walk of the tree: each directory right before those below it ('/'
// sorts first: "/a/b", "/a/b/c", "/a/b-x").
bool in_tree_order(std::string_view a, std::string_view b)
{
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    const auto rank = [](char c) { return c == '/' ? 0 : static_cast<unsigned char>(c) + 1; };
    return rank(x) < rank(y);
  });
}

// Where the part of a path below `directory` starts (after the '/' that follows it).
std::size_t below_at(std::string_view directory)
{
  return directory == "/" ? 1 : directory.size() + 1;
}

// Whether `path` names an entry below `directory` ("/a/b/c" is below "/a/b" and "/", not "/a/bc").
bool is_below(std::string_view path, std::string_view directory)
{
  if (directory == "/") {
    return path.size() > 1 && path.front() == '/';
  }
  return path.size() > directory.size() + 1 && path.starts_with(directory) &&
         path[directory.size()] == '/';
}
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
// Each is opened relative to the nearest of them above it, when there is one: its path is walked
// from there, as the kernel walks the whole path (component by component, each symlink and ".."
// as met), and opening a CUTLASS TU's 111 directories by whole path was a fifth of its stats.
// Closed on destruction.
class DirectoryHandles {
public:
  explicit DirectoryHandles(const std::vector<std::string>& directories)
    : m_fds(directories.size(), k_cannot_open)
  {
    std::vector<std::size_t> order(directories.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::sort(order.begin(), order.end(), [&directories](std::size_t a, std::size_t b) {
      return in_tree_order(directories[a], directories[b]);
    });
    std::vector<std::size_t> above;  // open directories, each below the one before it
    for (const std::size_t index : order) {
      const std::string& directory = directories[index];
      while (!above.empty() && !is_below(directory, directories[above.back()])) {
        above.pop_back();
      }
      const int fd =
        above.empty()
          ? ::open(directory.c_str(), k_open_flags)
          : ::openat(m_fds[above.back()], directory.c_str() + below_at(directories[above.back()]),
                     k_open_flags);
      m_fds[index] = fd < 0 ? k_cannot_open : fd;
      if (fd >= 0) {
        above.push_back(index);
      }
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
  Directory* previous = nullptr;     // a record's inputs come sorted: most share the one before's
  std::string_view previous_name;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    splits[i] = split_path(*paths[i]);
    if (!splits[i].whole) {
      if (previous == nullptr || splits[i].directory != previous_name) {
        previous = &by_name[splits[i].directory];
        previous_name = splits[i].directory;
      }
      directory_of[i] = previous;
      ++previous->files;
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
