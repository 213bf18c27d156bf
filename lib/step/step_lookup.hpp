// Everything the step plan (step_plan.hpp) is decided on, gathered in order, each stage stopping
// at the first plan to run plainly: the configuration and its refusals, the step's temporary names,
// working directory and tool, the store (and the remote, when the compile plan named the build
// tree's record root, whose "remote-failed" marker says once per build that the remote failed),
// the key, the local entry and, after a local miss, the remote's; each entry judged by whether its
// inputs still hold. The remote executor (NVFRESH_REMOTE_EXEC) is set up beside the store.
#pragma once

#include "cache/cache_storage.hpp"
#include "freshness/file_hasher.hpp"
#include "step/remote_step.hpp"
#include "step/step_key.hpp"
#include "step/step_plan.hpp"
#include "util/environment.hpp"

#include <optional>

namespace nvfresh {

// What gathering sets up that carrying the plan out uses too.
struct StepWorld {
  std::optional<CacheStorage> storage;
  std::optional<FileHasher> hasher;
  KeyedInputs inputs;
  std::optional<RemoteExecutor> executor;  // NVFRESH_REMOTE_EXEC (step/remote_step.hpp)
};

// Fills in the step (temporary names, cwd, canonical tool) and `world` as far as the plan needs.
StepPlan gather_and_plan(Step* step, const Environment& env, StepWorld* world);

// Whether every file the entry read still has its content and every lookup still finds nothing.
bool inputs_hold(const StepEntry& entry, FileHasher& hasher);

}  // namespace nvfresh
