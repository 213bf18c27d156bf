// Make-syntax dependency files: read what nvcc/gcc write, write what ninja and GNU make read.
//
// Reading accepts gcc's and nvcc's spellings (nvcc writes "target : dep \", with a space before
// the colon), line continuations, CRLF, several rules, escaped spaces/#/$$ and Windows-free paths.
// Writing produces one rule: the target exactly as given (byte for byte, as nvcc writes -MT's
// value), every prerequisite escaped the way gcc escapes (space, '#', '$'), one per line, and with
// phony_targets a "path:" rule per prerequisite except the first (like -MP).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct Depfile {
  std::vector<std::string> targets;        // unescaped, in order of appearance
  std::vector<std::string> prerequisites;  // unescaped, de-duplicated, in order of first appearance
};

// nullopt on malformed input, with a human-readable reason in *error when error != nullptr.
std::optional<Depfile> parse_depfile(std::string_view text, std::string* error = nullptr);

std::string format_depfile(std::string_view target, const std::vector<std::string>& prerequisites,
                           bool phony_targets);

// The escaping used for a prerequisite (exposed for tests).
std::string escape_depfile_path(std::string_view path);

} // namespace nvfresh
