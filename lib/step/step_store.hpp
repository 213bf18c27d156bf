// What a run of the tool leaves in the step cache once it exited 0: its entry (when it may be
// stored: every output present and non-empty, nothing read that changed while it ran, no temporary
// name the command does not give), stored under the plan's key and uploaded; for a hit sampled for
// verification, compared with the stored entry, reported (cache_verified or cache_mismatch) and
// stored over it when they differ.
#pragma once

#include "cache/cache_storage.hpp"
#include "freshness/file_hasher.hpp"
#include "step/step_key.hpp"
#include "step/step_plan.hpp"
#include "step/step_report.hpp"
#include "step/step_trace.hpp"
#include "util/process.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nvfresh {

// One run of the tool, as the runner saw it.
struct ToolRun {
  ProcessResult result;
  std::string out;    // its stdout
  std::string err;    // its stderr
  std::string trace;  // its own trace lines
  // A run on the remote executor (step/remote_step.hpp) has no trace: what it wrote (the outputs
  // that came back) instead.
  std::optional<StepAccesses> accesses;
  std::int64_t started_ns = 0;  // CLOCK_REALTIME_COARSE before it started (a file's stamp)
  std::int64_t run_ns = 0;      // how long it ran
};

// Stores (or compares) the run of a plan to run_and_store or run_and_verify. An error is logged:
// the step is then not stored.
void keep_run(const StepPlan& plan, const Step& step, const ToolRun& run, const KeyedInputs& inputs,
              CacheStorage& storage, FileHasher& hasher, const StepReport& report);

}  // namespace nvfresh
