// The checks of where nvfresh writes: the tree's record root ("records") and the object cache
// ("cache"): each can be written (a file is created and removed in it, or, while it does not exist
// yet, in the directory nvfresh would create it in), and its file system has room for a compile
// (space/full_disk.hpp's words and thresholds, and the NVFRESH_SPACE_FLOOR floor).
#pragma once

#include "doctor/setup_check.hpp"

#include <cstdint>
#include <string>

namespace nvfresh {

// Why nothing can be written at or below `dir` (the words of the failing step), or "" when a file
// can be created there.
std::string write_problem(const std::string& dir);

// configured_floor: NVFRESH_SPACE_FLOOR ("" for the default).
SetupCheck check_record_root(const std::string& record_root, const std::string& configured_floor);

struct CacheDirFacts {
  bool enabled = true;
  std::string dir;
  bool shared = false;
  std::uint64_t min_free = 0;  // NVFRESH_CACHE_MIN_FREE in bytes
};

SetupCheck check_cache_dir(const CacheDirFacts& cache);

}  // namespace nvfresh
