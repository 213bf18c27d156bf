// `nvfresh compare A B [--json]`: compares two compiled artifacts by normalized per-component digests.
// Exit status: 0 same, 1 different, 2 unreadable (or a usage error).
#pragma once

#include <string>
#include <vector>

namespace nvfresh {

// `args` are the words after "compare".
int run_compare(const std::vector<std::string>& args);

} // namespace nvfresh
