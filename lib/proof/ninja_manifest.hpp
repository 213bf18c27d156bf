// build.ninja as CMake's Ninja generator writes it, read as a build graph: its link edges
// ("build <artifact>: <LANG>_<KIND>_LINKER__<t>_ <in> | <implicit>"), its phony target aliases
// ("build <target>: phony <artifact>") and its CUDA compile edges
// ("build <object>: CUDA_COMPILER__<t>_<cfg> <source>"). Order-only inputs of a link edge are not
// links: they are not in it.
#pragma once

#include "proof/build_graph.hpp"

#include <string>
#include <string_view>

namespace nvfresh {

// Pure (unit-tested): the text of build.ninja and the directory it is in.
BuildGraph parse_ninja_manifest(std::string_view text, const std::string& build_dir);

}  // namespace nvfresh
