// How much disk a directory tree takes, counted the way du counts it: the allocated blocks of
// every file and directory, each hard-linked file once, symbolic links not followed, and never
// into another file system: a mount point inside the tree is not entered, and is reported (a tree
// that holds one is never removed by `nvfresh space --clean`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace nvfresh {

struct TreeSize {
  bool exists = false;
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
  std::string mount_inside;  // the first mount point found inside, "" when none
  std::string unreadable;    // the first directory that could not be read, "" when none
};

// Called every k_size_progress_entries entries with what has been counted so far.
using SizeProgress = std::function<void(const TreeSize& so_far)>;
inline constexpr std::uint64_t k_size_progress_entries = 4096;

TreeSize measure_tree(const std::string& dir, const SizeProgress& progress = {});

}  // namespace nvfresh
