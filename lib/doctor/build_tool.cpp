#include "doctor/build_tool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace nvfresh {

namespace {

const std::vector<int> k_minimum_ninja = {1, 7};

bool is_digit(char c)
{
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::optional<ToolVersion> parse_tool_version(std::string_view version_output)
{
  std::string_view line = version_output.substr(0, version_output.find('\n'));
  for (size_t i = 0; i < line.size(); ++i) {
    if (!is_digit(line[i]) || (i > 0 && (is_digit(line[i - 1]) || line[i - 1] == '.'))) {
      continue;
    }
    size_t end = i;
    while (end < line.size() &&
           (is_digit(line[end]) ||
            (line[end] == '.' && end + 1 < line.size() && is_digit(line[end + 1])))) {
      ++end;
    }
    std::string_view text = line.substr(i, end - i);
    if (text.find('.') == std::string_view::npos) {
      continue;
    }
    ToolVersion version{{}, std::string(text)};
    for (size_t begin = 0; begin <= text.size();) {
      size_t dot = std::min(text.find('.', begin), text.size());
      version.parts.push_back(std::stoi(std::string(text.substr(begin, dot - begin))));
      begin = dot + 1;
    }
    return version;
  }
  return std::nullopt;
}

SetupCheck judge_build_tool(const std::string& generator, const std::string& program,
                            const std::optional<std::string>& version_output)
{
  if (!version_output) {
    return failed(
      "build-tool", fmt::format("{} --version could not be run", program),
      fmt::format("install {} or put it on PATH (CMAKE_MAKE_PROGRAM names it)", generator));
  }
  auto version = parse_tool_version(*version_output);
  if (!version) {
    return failed("build-tool",
                  fmt::format("{} --version printed no version: {}", program,
                              version_output->substr(0, version_output->find('\n'))),
                  "use the build tool CMake generated the tree for");
  }
  if (generator == "ninja") {
    if (version->parts < k_minimum_ninja) {
      return failed("build-tool",
                    fmt::format("ninja {} ({}) is older than 1.7: the sync step's stamps are "
                                "implicit outputs, which it cannot read",
                                version->text, program),
                    "install ninja 1.7 or newer (1.12 or newer also survives an edit during "
                    "the build without nvfresh)");
    }
    return passed("build-tool", fmt::format("ninja {} ({}), 1.7 or newer as nvfresh needs",
                                            version->text, program));
  }
  if (version_output->find("GNU Make") == std::string::npos) {
    return failed("build-tool",
                  fmt::format("{} is not GNU make: {}", program,
                              version_output->substr(0, version_output->find('\n'))),
                  "build with GNU make, as CMake's Unix Makefiles generator expects");
  }
  return passed("build-tool", fmt::format("GNU make {} ({})", version->text, program));
}

}  // namespace nvfresh
