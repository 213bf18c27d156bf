// What an nvcc says its version is: the line of `nvcc --version` that names the release.
#pragma once

#include "util/process.hpp"

#include <string>

namespace nvfresh {

// "Cuda compilation tools, release 13.0, V13.0.88"; empty when nvcc does not run or says no release.
std::string query_nvcc_version(const std::string& nvcc, const Environment& env);

// The line of `text` (nvcc --version's output) that names the release; empty when there is none.
std::string release_line(const std::string& text);

}  // namespace nvfresh
