// The environment variables that change what a compile produces, and so belong to its signature.
#pragma once

#include "util/hasher.hpp"
#include "util/process.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

inline constexpr std::string_view k_path_variable = "PATH";

// NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS, NVCC_CCBIN, CPATH, C_INCLUDE_PATH, CPLUS_INCLUDE_PATH,
// GCC_EXEC_PREFIX, COMPILER_PATH, SOURCE_DATE_EPOCH, PATH (where nvcc finds the host compiler): the
// ones that are set, with their values.
std::map<std::string, std::string> compile_environment(const Environment& env);

// TERM, COLUMNS, GCC_COLORS, GCC_URLS, TERM_URLS, NO_COLOR: what gcc and cudafe++ read to render
// their messages on a terminal (colours, links, caret width). The ones that are set, with values.
std::map<std::string, std::string> terminal_environment(const Environment& env);

// The command signature: normalized arguments, the compile-relevant environment except PATH (which
// is judged by what nvcc's lookups through it resolve to: lib/path_lookups.hpp), working dir.
Digest command_signature(const std::vector<std::string>& signature_args,
                         const std::map<std::string, std::string>& compile_env,
                         const std::string& working_dir);

}  // namespace nvfresh
