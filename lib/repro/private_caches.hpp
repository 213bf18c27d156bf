// The compile caches `repro` gives each run its own empty directory for. A cache shared between
// runs hides variation: the first run fills it, and every later run replays the first run's kernels
// instead of compiling. Every run therefore gets each variable below pointed at a fresh directory of
// its own, set or not, and an inherited setting is named in one warning line.
//
// Switches that turn a cache off (CUTE_DSL_DISABLE_FILE_CACHING, CUDA_CACHE_DISABLE,
// TORCHINDUCTOR_FORCE_DISABLE_CACHES, CUPY_CACHE_IN_MEMORY) are left as they are: they hide nothing.
// In-memory caches live and die with one process, so they do not reach across runs.
#pragma once

#include "util/process.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvfresh {

struct CompileCache {
  std::string_view variable;
  std::string_view tool;
  std::string_view holds;  // what is cached there, and where it is by default
};

const std::vector<CompileCache>& compile_caches();

// Each cache variable with its private directory for one run: "<cache_root>/<VARIABLE>".
std::vector<std::pair<std::string, std::string>> private_cache_directories(
  const std::string& cache_root);

// One line per cache variable `env` sets: what it is and that the runs do not use it.
std::vector<std::string> inherited_cache_warnings(const Environment& env);

}  // namespace nvfresh
