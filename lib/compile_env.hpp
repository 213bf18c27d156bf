// The environment variables that change what a compile produces, and so belong to its signature.
#pragma once

#include "util/process.hpp"

#include <map>
#include <string>

namespace nvfresh {

// NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS, NVCC_CCBIN, CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH,
// GCC_EXEC_PREFIX, COMPILER_PATH, SOURCE_DATE_EPOCH: the ones that are set, with their values.
std::map<std::string, std::string> compile_environment(const Environment& env);

} // namespace nvfresh
