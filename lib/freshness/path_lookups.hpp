// The programs a compile found through PATH, read back from its record, and where they are now.
//
// nvcc runs the `gcc` it finds on PATH, and gcc the `as` it finds there. The tracer sees such a
// lookup as probes that found nothing in the PATH directories searched first (recorded as missing)
// and the file found in the next one (recorded as an input). A changed PATH matters only where it
// changes what such a name resolves to; a directory added for something else (a Python venv,
// conda) changes nothing, so PATH itself is not part of the command signature.
#pragma once

#include "record/record.hpp"

#include <string>
#include <vector>

namespace nvfresh {

struct PathLookup {
  std::string name;      // "gcc"
  std::string resolved;  // "/usr/bin/gcc", or "" when no PATH directory held it
  bool program = true;   // looked up to be run (gcc, as); false for a data file found along PATH
                         // (nvcc looks for nvcc.profile in each PATH directory), found by existence
};

// The lookups the record shows against its own PATH (record.env["PATH"]): a name counts when
// every PATH directory before the one holding it (or every directory, when none did) has a
// recorded probe for it. Empty when the record has no PATH.
std::vector<PathLookup> path_lookups_of(const Record& record);

// The first "<dir>/<name>" that is an executable file (program) or any regular file (not), for
// the directories of `path` in order (an empty entry is `working_dir`); "" when there is none.
std::string resolve_in_path(const std::string& name, const std::string& path,
                            const std::string& working_dir, bool program = true);

}  // namespace nvfresh
