// A cicc or ptxas step run on a REAPI Execution service (NVFRESH_REMOTE_EXEC) after a step-cache
// miss, through the nvfresh-remote helper (cache/remote_cache.hpp, RemoteCache::execute).
//
// The Action: its input root holds the files the step key hashes (nvcc's temporary files the
// step is given) at their absolute paths less the leading '/', and a sha256sum file of the
// toolkit (cicc, ptxas, libdevice, nvcc.profile as this machine has them; the helper writes it and
// puts the same lines in the salt); its outputs are the other temporary names of its words; its
// Command is /bin/sh running k_check_script: the sums checked (a worker whose toolkit differs
// exits k_toolkit_differs_status), the step's working directory made and entered, the tool
// exec'ed with the step's own words. So the worker's runner must show the input root at '/' and
// the toolkit at this machine's path (buildbox-run-bubblewrap does; doc/manual.md says how), and
// the tool sees the same paths as locally: its outputs are byte for byte a local run's.
//
// What comes back is judged as a local run is (step_store.hpp: every output present and
// non-empty, no temporary name the command does not give), stored as the same step entry, and
// the compile's record gets what a local run's gets: the tool's process and the outputs it wrote
// (a local cicc or ptxas reads nothing else that a record keeps; the toolkit files are the ones
// the worker checked against this machine's, and the tool is in the key). Anything else
// (the executor down, slow, refusing, another toolkit, the step failing there) runs the tool
// locally with one `nvfresh:` line per build; a failure of the executor keeps it off for the rest
// of the build (the marker "remote-exec-failed" under the record root, as the remote cache's).
#pragma once

#include "cache/remote_cache.hpp"
#include "step/step_key.hpp"
#include "step/step_store.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nvfresh {

// The worker's exit status when its toolkit is not this machine's.
inline constexpr int k_toolkit_differs_status = 213;
// The sums file's place in the input root.
inline constexpr const char* k_toolkit_sums_path = "nvfresh-step/toolkit.sha256";
// $1: the sums file, $2: the working directory, then the tool and its arguments.
inline constexpr const char* k_check_script =
  "sha256sum --check --status \"$1\" || exit 213; mkdir -p \"$2\" && cd \"$2\" || exit 214; "
  "shift 2; exec \"$@\"";

struct RemoteStepAction {
  ActionSpec action;  // platform and do_not_cache are the executor's (RemoteCache::execute)
  // The Action's output paths and the local files they are.
  std::map<std::string, std::string> outputs;
};

// The Action of `step`, whose key hashed `given_files` (step_key.hpp: KeyedInputs).
RemoteStepAction remote_step_action(const Step& step, const std::set<std::string>& given_files);

// The toolkit files the worker must have as this machine has them: of those of the toolkit that
// holds `tool_exe` (<root>/nvvm/bin/cicc or <root>/bin/ptxas), the ones that exist.
std::vector<std::string> toolkit_files(const std::string& tool_exe);

// The executor of the configuration in `env` and its failure markers, when NVFRESH_REMOTE_EXEC is
// set and the compile plan named the record root.
struct RemoteExecutor {
  RemoteCache remote;
  std::string failure_marker;      // "remote-exec-failed": the executor failed in this build
  std::string step_failed_marker;  // "remote-exec-step-failed": said once per build
};

// Whether the executor may be asked (it did not fail in this build, or that was long ago).
bool executor_usable(const RemoteExecutor& executor);

// The step run on the executor: its outputs written where nvcc expects them, what it printed and
// wrote (for the entry and the record); nullopt when it must run locally (said on stderr,
// once per build).
std::optional<ToolRun> run_remotely(const Step& step, const KeyedInputs& inputs,
                                    RemoteExecutor& executor);

}  // namespace nvfresh
