// The check for a compiler cache in the CUDA compile chain, and what nvfresh does about it
// (compile/compiler_caches.hpp decides; this only says it): a cache between nvfresh and nvcc
// (CUDA_COMPILER_LAUNCHER kept with NVFRESH_KEEP_CUDA_LAUNCHER) is run with CCACHE_RECACHE=1
// (ccache: it recompiles and stores, never serves) or left out (sccache, buildcache); a cache
// before nvfresh answers its hits without nvfresh; nvcc or the host compiler that is a cache
// (Debian's /usr/lib/ccache on PATH, a symlink) is run with CCACHE_RECACHE=1 too. Each is a
// problem: the cache costs time and disk and cannot serve a CUDA object, or serves one unchecked.
#pragma once

#include "doctor/nvcc_runs.hpp"
#include "doctor/setup_check.hpp"

#include <string>
#include <vector>

namespace nvfresh {

// A program of the compile and what it resolves to (symlinks followed).
struct ResolvedProgram {
  std::string role;      // "nvcc", "host compiler"
  std::string as_named;  // as the build names it
  std::string resolved;  // the file it runs ("" when not found)
};

SetupCheck check_compiler_caches(const std::vector<NvccRun>& runs,
                                 const std::vector<ResolvedProgram>& programs);

}  // namespace nvfresh
