// `nvfresh compare A B [--json]`: compares two compiled artifacts by normalized per-component digests.
// Exit status: 0 same, 1 different, 2 unreadable (or a usage error).
#pragma once

#include "digest/compare.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nvfresh {

// `args` are the words after "compare".
int run_compare(const std::vector<std::string>& args);

// The report `nvfresh compare` prints (also used by `nvfresh repro` for its per-variant diffs):
// one line per component, kernel changes and PTX diff lines under differing ones, then a verdict.
std::string format_comparison(const std::string& a, const std::string& b, const Comparison& comparison);
nlohmann::json comparison_json(const std::string& a, const std::string& b, const Comparison& comparison);

} // namespace nvfresh
