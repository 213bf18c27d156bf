#include "doctor/compiler_cache_chain.hpp"

#include "compile/compiler_caches.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace nvfresh {

namespace {

// What nvfresh does with a cache between itself and nvcc, in words, from the code that does it.
std::string handling_of(const std::string& cache)
{
  const ChainedRun run = prepare_chained_caches({{cache}, "nvcc", {}}, {});
  if (!run.bypassed.empty()) {
    return fmt::format("nvfresh leaves {} out of every compile (its server would compile outside "
                       "the tracer), so it does nothing there",
                       cache);
  }
  return fmt::format("nvfresh runs it with CCACHE_RECACHE=1 (a hit could not be verified), so "
                     "{} recompiles and stores every CUDA object and never serves one",
                     cache);
}

}  // namespace

SetupCheck check_compiler_caches(const std::vector<NvccRun>& runs,
                                 const std::vector<ResolvedProgram>& programs)
{
  std::vector<std::string> problems;
  std::set<std::string> behind;
  std::set<std::string> before;
  size_t compiles_behind = 0;
  for (const auto& run : runs) {
    if (!run.compile || !run.through_nvfresh) {
      continue;
    }
    bool counted = false;
    for (const auto& word : run.launchers()) {
      if (is_compiler_cache(word)) {
        behind.insert(std::string(file_name_of(word)));
        compiles_behind += counted ? 0 : 1;
        counted = true;
      }
    }
    for (const auto& word : run.launchers_before_nvfresh()) {
      if (is_compiler_cache(word)) {
        before.insert(std::string(file_name_of(word)));
      }
    }
  }
  problems.reserve(behind.size() + before.size() + programs.size());
  for (const auto& cache : behind) {
    problems.push_back(fmt::format("{} stands between nvfresh and nvcc in {} compiles: {}", cache,
                                   compiles_behind, handling_of(cache)));
  }
  for (const auto& cache : before) {
    problems.push_back(fmt::format("{} stands before nvfresh: its hits answer without nvfresh, "
                                   "with no record and nothing checked",
                                   cache));
  }
  for (const auto& program : programs) {
    if (!program.resolved.empty() && is_compiler_cache(program.resolved)) {
      problems.push_back(fmt::format("the {} {} is {}: nvfresh runs the compile with "
                                     "CCACHE_RECACHE=1, so it recompiles and stores, never serves",
                                     program.role, program.as_named, program.resolved));
    }
  }
  if (!problems.empty()) {
    std::string finding;
    for (const auto& problem : problems) {
      finding += (finding.empty() ? "" : "; ") + problem;
    }
    return failed("compiler-cache", finding,
                  "take the cache out of the CUDA chain: reconfigure without "
                  "-DNVFRESH_KEEP_CUDA_LAUNCHER=ON (the module then drops it; C and C++ keep "
                  "theirs), and point -ccbin/CMAKE_CUDA_HOST_COMPILER and nvcc at the real "
                  "programs; nvfresh's own cache serves CUDA objects, keyed on every input");
  }
  std::string programs_seen;
  for (const auto& program : programs) {
    programs_seen += fmt::format("{}{} {}", programs_seen.empty() ? "" : ", ", program.role,
                                 program.resolved.empty() ? program.as_named : program.resolved);
  }
  return passed("compiler-cache",
                fmt::format("no compiler cache in the CUDA chain ({})", programs_seen));
}

}  // namespace nvfresh
