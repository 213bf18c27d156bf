// The step cache's runner: nvfresh started in place of cicc or ptxas inside nvcc's process tree.
// The tracer (lib/trace/nvfresh_trace.c) execs `nvfresh __step <tool> <argv...>` instead of the
// tool when NVFRESH_STEP_RUNNER names this executable (set by the compile plan when the cache and
// the step cache are on). nvcc keeps orchestrating: no --dryrun is read.
//
// run_step decides before it acts: it gathers what the plan needs (step_lookup.hpp), takes the
// plan (step_plan.hpp), carries it out (carry_out, through a ProcessRunner) and ends the process
// as the carrying out says (end_step, the one place that ends it).
//
// A hit writes the step's outputs where nvcc expects them, sends on the trace channel the process,
// reads and lookups the served step stands for (so the compile's record is as complete as with the
// real tool), prints what the tool printed and exits 0. A miss runs the tool under a trace channel
// of its own, passes its output and status on, forwards its trace lines, and stores the step when
// it exited 0 with every output present and non-empty, read nothing of nvcc's temporary files it
// was not given, and lost no trace line (step_store.hpp). Anything that goes wrong before the tool
// ran execs the tool plainly: the step cache never makes a compile fail.
//
// With a remote executor (NVFRESH_REMOTE_EXEC, step/remote_step.hpp), a miss to run and store runs
// there first: what comes back is written, replayed and stored as a local run is; anything else
// runs the tool locally.
//
// With a remote cache (NVFRESH_REMOTE), a local miss asks the remote for the step's entry
// (cache/remote_cache.hpp, step_action), which is judged like a local one and stored locally; a
// stored step is uploaded unless the remote is read-only. A remote that failed is said once per
// build and not asked again: the marker "remote-failed" in NVFRESH_STEP_RECORD_ROOT, as for objects.
#pragma once

#include "freshness/file_hasher.hpp"
#include "step/remote_step.hpp"
#include "step/step_key.hpp"
#include "step/step_plan.hpp"
#include "step/step_report.hpp"
#include "step/step_trace.hpp"
#include "util/environment.hpp"
#include "util/process.hpp"

#include <string>
#include <vector>

namespace nvfresh {

class CacheStorage;

inline constexpr const char* k_step_subcommand = "__step";
inline constexpr const char* k_step_runner_variable = "NVFRESH_STEP_RUNNER";
// LD_PRELOAD as the tracer found it: the runner starts without one, the tool gets it back.
inline constexpr const char* k_step_preload_variable = "NVFRESH_STEP_PRELOAD";

// args: <tool path as execve named it> <argv[0]> <argv[1]> ...; returns the exit status (or does
// not return: an exec of the tool, or a re-raised signal).
int run_step(const std::vector<std::string>& args, const Environment& env);

// What carrying a plan out needs beside the plan. storage, hasher and inputs are needed (non-null)
// for every plan but run_plainly.
struct StepContext {
  const Step& step;
  const Environment& env;  // the tool's (LD_PRELOAD given back)
  const StepReport& report;
  const TraceSink& sink;
  CacheStorage* storage = nullptr;
  FileHasher* hasher = nullptr;
  const KeyedInputs* inputs = nullptr;
  RemoteExecutor* executor = nullptr;  // NVFRESH_REMOTE_EXEC: a miss runs there first
};

// How the runner's process ends once the plan was carried out.
struct StepEnding {
  enum class Kind {
    exec_tool,    // replace this process with the tool, as nvcc asked for it
    exit_served,  // the step was served: exit 0
    exit_as_run,  // the tool ran: end as it ended (status, or its signal re-raised)
  };
  Kind kind = Kind::exec_tool;
  ProcessResult result;  // exit_as_run
};

// Carries the plan out: reports and counts it, serves the entry or runs the tool through `runner`
// (and keeps its run), and says how to end. An error before the tool ran means exec_tool.
StepEnding carry_out(const StepPlan& plan, const StepContext& context, ProcessRunner& runner);

[[noreturn]] void end_step(const StepEnding& ending, const Step& step, const Environment& env);

}  // namespace nvfresh
