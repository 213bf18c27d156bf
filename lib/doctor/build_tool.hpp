// The check of the build tool's version: `ninja --version` or `make --version`, against what
// nvfresh's CMake wiring needs. Ninja: 1.7 or newer, for the sync step's stamps (implicit outputs,
// "build a | b: …", with restat). Make: GNU make (CMake's Makefiles and their per-target
// sub-makes); no version of it is known to fall short.
#pragma once

#include "doctor/setup_check.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct ToolVersion {
  std::vector<int> parts;  // {1, 11, 1}
  std::string text;        // "1.11.1"
};

// The first dotted number of the first line ("GNU Make 4.3" -> 4.3); nullopt when none.
std::optional<ToolVersion> parse_tool_version(std::string_view version_output);

// Pure (unit-tested): generator "ninja" or "make", the program as run, what --version printed
// (nullopt: it could not be run).
SetupCheck judge_build_tool(const std::string& generator, const std::string& program,
                            const std::optional<std::string>& version_output);

}  // namespace nvfresh
