// Two checks of how a build tree's steps are wired, from its generator files alone (pure):
//   - "compiles": every CUDA compile of the tree runs nvcc through nvfresh; the steps that run
//     nvcc without it are named (a target whose CUDA launcher lacks nvfresh, a custom command
//     calling nvcc, an ExternalProject's tree);
//   - "sync": a step runs `nvfresh sync`, and every compile through nvfresh has one of the CMake
//     module's stamps among its inputs, which is how sync makes the build tool rebuild it.
#pragma once

#include "doctor/nvcc_runs.hpp"
#include "doctor/setup_check.hpp"
#include "proof/build_commands.hpp"

#include <string>
#include <vector>

namespace nvfresh {

// The build commands of one tree, where they were read from ("/b/build.ninja", "/b (Makefiles)"),
// and the nvcc programs they run.
struct TreeCommands {
  std::string tree;  // the build tree's directory
  std::string source;
  BuildCommands commands;
  std::vector<NvccRun> runs;  // nvcc_runs_of(commands.commands, …)
};

SetupCheck check_compiles_through_nvfresh(const std::vector<TreeCommands>& trees);
SetupCheck check_sync_wired(const TreeCommands& top);

}  // namespace nvfresh
