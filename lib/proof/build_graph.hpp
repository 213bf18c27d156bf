// The link steps of a CMake build tree: which artifact (.so, .a, executable, device-link object) is
// linked from which objects and which other artifacts; and which objects nvcc compiles. Read from
// the generator's own files, never by running a build: build.ninja (ninja_manifest.hpp) or the
// Makefiles (make_files.hpp). Which libraries a link step really read is what its link record
// says (link_record.hpp), which proof relies on instead.
// Paths in the result are absolute and lexically normal.
#pragma once

#include "proof/link_command.hpp"

#include <string>
#include <vector>

namespace nvfresh {

// One object the build compiles with nvcc (CUDA_COMPILER rules, "Building CUDA object").
struct CompileEdge {
  std::string object;
  std::string source;
  bool operator==(const CompileEdge&) const = default;
};

struct BuildGraph {
  std::string generator;  // "ninja", "make", or "" when no build graph was found
  std::vector<LinkEdge> edges;
  std::vector<CompileEdge> cuda_compiles;

  const LinkEdge* find(const std::string& artifact_or_target) const;  // path, target or file name
  // Every artifact of this tree the given one links, directly or through others.
  std::vector<std::string> linked_closure(const std::string& artifact) const;
  // The edges whose objects include the given object path.
  std::vector<const LinkEdge*> containing(const std::string& object) const;
};

// Records name objects with symlinks resolved (record_root.hpp): so do graph paths. `dir` as it
// resolves, or as given when it cannot be resolved.
std::string canonical_dir(const std::string& dir);

// Drops each edge's libraries that are not artifacts of the graph (system libraries, -l names).
void keep_known_libraries(BuildGraph& graph);

}  // namespace nvfresh
