// The depfile nvfresh writes for the build tool (ninja deletes it after reading it, make keeps it):
// nvcc's own prerequisites verbatim, then every other recorded input (files only traced, the tools),
// for the target the build named with -MT. Written after a compile and again on every skip.
#pragma once

#include "compile/depfile.hpp"
#include "record/record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

// Empty when one of them cannot be written so that make and ninja read it back (nvcc's own
// depfile is then left in place).
std::vector<std::string> depfile_prerequisites(const Record& record, const std::string& working_dir,
                                               const std::optional<Depfile>& nvcc_depfile);

// Writes the depfile atomically, unless it already holds exactly these bytes. Throws FileWriteError
// on failure.
void write_build_depfile(const std::string& path, const std::string& target,
                         const std::vector<std::string>& prerequisites, bool phony_targets);

}  // namespace nvfresh
