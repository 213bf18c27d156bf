// The build graph of a CMake build directory, read from whichever generator's files it has
// (build.ninja: ninja_manifest; Makefiles: make_files). Kept apart from build_graph, which both
// readers build on, so that no module of proof/ includes one that includes it back.
#pragma once

#include "proof/build_graph.hpp"

#include <string>

namespace nvfresh {

// Reads the build graph of a CMake build directory (either generator); empty when none is found.
BuildGraph load_build_graph(const std::string& build_dir);

}  // namespace nvfresh
