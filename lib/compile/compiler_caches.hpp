// Compiler caches chained behind nvfresh (`nvfresh ccache nvcc ...`, or CMake's
// CUDA_COMPILER_LAUNCHER=ccache kept behind nvfresh by the module), and ccache inside the compile
// (as gcc on PATH, or as nvcc through a symlink). nvfresh runs the compiler only when an input
// changed in content or nothing vouches for the object; a cache that keys nvcc on `nvcc -E` (one
// pass only) would then answer with a stale object for host-only and later-arch header edits, a
// new shadowing header, `__has_include` turning true, or env flags. So when nvfresh compiles:
//   - ccache is told to recompile and store the fresh result (CCACHE_RECACHE=1): it runs nvcc as
//     its child, which the tracer sees;
//   - sccache and buildcache launchers are left out of the command: sccache compiles in a server
//     process outside nvfresh's trace, so its result could never be verified.
// A record whose compile the tracer did not see is never called fresh (freshness.cpp).
#pragma once

#include "nvcc/compiler_chain.hpp"
#include "util/environment.hpp"

#include <string>
#include <vector>

namespace nvfresh {

struct ChainedRun {
  std::vector<std::string> command;   // prefix (without bypassed caches), nvcc, its arguments
  Environment env;                    // with the caches' recompile switches set
  std::vector<std::string> bypassed;  // launchers left out, for the log
};

// Whether a launcher word (a path or a name) is one of the compiler caches above.
bool is_compiler_cache(const std::string& word);

ChainedRun prepare_chained_caches(const CompilerChain& chain, const Environment& env);

}  // namespace nvfresh
