// The report of a comparison of two artifacts, as `nvfresh compare` prints it (and `nvfresh repro`
// for its per-variant diffs): one line per component, kernel changes and PTX diff lines under the
// differing ones, then a verdict; and the same as JSON.
#pragma once

#include "digest/compare.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace nvfresh {

std::string format_comparison(const std::string& a, const std::string& b,
                              const Comparison& comparison);
nlohmann::json comparison_json(const std::string& a, const std::string& b,
                               const Comparison& comparison);

}  // namespace nvfresh
