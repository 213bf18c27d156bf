#include "doctor/build_wiring.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvfresh {

namespace {

constexpr size_t k_steps_named = 5;

bool is_cmake_cuda_compile(const NvccRun& run)
{
  return run.description.starts_with("Building CUDA object");
}

std::string describe_bypass(const NvccRun& run, const TreeCommands& tree, bool top_tree)
{
  std::string where = top_tree ? run.step : fmt::format("{} (in {})", run.step, tree.tree);
  if (!top_tree) {
    return fmt::format("{}: a nested build tree (an ExternalProject) runs {} without nvfresh",
                       where, run.nvcc);
  }
  if (is_cmake_cuda_compile(run) || tree.commands.generator == "make") {
    return fmt::format("{}: runs {} without nvfresh", where, run.nvcc);
  }
  return fmt::format("{}: a custom command runs {} without nvfresh", where, run.nvcc);
}

std::string named_list(const std::vector<std::string>& items)
{
  std::string out;
  for (size_t i = 0; i < items.size() && i < k_steps_named; ++i) {
    out += (i == 0 ? "" : "; ") + items[i];
  }
  if (items.size() > k_steps_named) {
    out += fmt::format("; and {} more", items.size() - k_steps_named);
  }
  return out;
}

bool runs_nvfresh_sync(const BuildCommand& command)
{
  const std::string& text = command.command;
  for (size_t at = text.find("nvfresh"); at != std::string::npos;
       at = text.find("nvfresh", at + 1)) {
    size_t after = at + std::string_view("nvfresh").size();
    size_t quote_end = text.find_first_not_of('"', after);
    if (quote_end != std::string::npos && text.compare(quote_end, 5, " sync") == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

SetupCheck check_compiles_through_nvfresh(const std::vector<TreeCommands>& trees)
{
  if (trees.empty() || trees.front().commands.generator.empty()) {
    return failed("compiles", "no build.ninja or Makefile here, so no build steps to look at",
                  "pass a configured CMake build tree: nvfresh doctor -C <build dir>");
  }
  size_t compiles = 0;
  std::vector<std::string> bypasses;
  for (const auto& tree : trees) {
    for (const auto& run : tree.runs) {
      if (!run.compile) {
        continue;
      }
      ++compiles;
      if (!run.through_nvfresh) {
        bypasses.push_back(describe_bypass(run, tree, &tree == &trees.front()));
      }
    }
  }
  if (compiles == 0) {
    return failed("compiles",
                  fmt::format("no step of {} compiles CUDA with nvcc", trees.front().source),
                  "pass the build tree of a project with CUDA sources (-C <build dir>)");
  }
  if (!bypasses.empty()) {
    return failed(
      "compiles",
      fmt::format("{} of {} CUDA compiles bypass nvfresh: {}", bypasses.size(), compiles,
                  named_list(bypasses)),
      "configure with -DCMAKE_PROJECT_INCLUDE=<nvfresh>/cmake/nvfresh.cmake (it puts nvfresh in "
      "front of every CUDA target; keep a target's CUDA_COMPILER_LAUNCHER unset or starting with "
      "nvfresh); a custom command calling nvcc: put ${NVFRESH_EXECUTABLE} before the compiler in "
      "its COMMAND; an ExternalProject: pass -DCMAKE_PROJECT_INCLUDE=... in its CMAKE_ARGS");
  }
  return passed("compiles",
                fmt::format("all {} CUDA compiles run through nvfresh ({}{})", compiles,
                            trees.front().source,
                            trees.size() > 1 ? fmt::format(" and {} nested trees", trees.size() - 1)
                                             : std::string()));
}

SetupCheck check_sync_wired(const TreeCommands& top)
{
  const std::string fix_module =
    "configure with -DCMAKE_PROJECT_INCLUDE=<nvfresh>/cmake/nvfresh.cmake (it adds the "
    "nvfresh_sync step and the per-source stamps; CMAKE_CUDA_COMPILER_LAUNCHER alone adds "
    "neither); another build system: run 'nvfresh sync -C <build dir>' before the build tool";
  auto sync =
    std::find_if(top.commands.commands.begin(), top.commands.commands.end(), runs_nvfresh_sync);
  if (sync == top.commands.commands.end()) {
    return failed("sync",
                  fmt::format("no step of {} runs 'nvfresh sync': an object stale in a way no "
                              "mtime shows (a header replaced by an older copy, a new header that "
                              "shadows one, NVCC_APPEND_FLAGS) is not rebuilt by the build",
                              top.source),
                  fix_module);
  }
  size_t through = 0;
  std::vector<std::string> unstamped;
  for (const auto& run : top.runs) {
    if (run.compile && run.through_nvfresh) {
      ++through;
      if (!run.stamped) {
        unstamped.push_back(run.step);
      }
    }
  }
  if (!unstamped.empty()) {
    return failed("sync",
                  fmt::format("'nvfresh sync' runs ({}), but {} of {} CUDA compiles have no "
                              "nvfresh stamp among their inputs, so sync cannot make the build "
                              "tool rebuild them: {}",
                              sync->output, unstamped.size(), through, named_list(unstamped)),
                  fix_module);
  }
  return passed("sync", fmt::format("'nvfresh sync' runs in every build ({}), and all {} CUDA "
                                    "compiles through nvfresh depend on its stamps",
                                    sync->output, through));
}

}  // namespace nvfresh
