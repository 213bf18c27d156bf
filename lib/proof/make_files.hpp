// A Makefiles build tree as CMake's Unix Makefiles generator writes it, read as a build graph:
// every "<dir>/CMakeFiles/<target>.dir/link.txt" and dlink.txt (the link and device-link command
// lines, run in <dir>; "@file" response files and nvcc's --options-file are expanded:
// link_command.hpp), and build.make (its rule prerequisites, and "Building CUDA object <object>").
#pragma once

#include "proof/build_graph.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// Pure parsers (unit-tested): one link.txt with the directory it runs in and its target.
std::vector<LinkEdge> parse_make_link_commands(std::string_view text, const std::string& run_dir,
                                               const std::string& target);
// The CUDA compiles of one target's build.make (object paths relative to run_dir).
std::vector<CompileEdge> parse_make_cuda_compiles(std::string_view text,
                                                  const std::string& run_dir);

// Every target of the Makefiles tree at build_dir (absolute, canonical).
BuildGraph load_make_graph(const std::string& build_dir);

}  // namespace nvfresh
