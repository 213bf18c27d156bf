// The link steps of a CMake build tree: which artifact (.so, .a, executable, device-link object) is
// linked from which objects and which other artifacts; and which objects nvcc compiles. Read from
// the generator's own files, never by running a build:
//   Ninja:          build.ninja's link edges ("build <artifact>: <LANG>_<KIND>_LINKER__<t>_ <in> | <implicit>"),
//                   its phony target aliases ("build <target>: phony <artifact>") and its CUDA
//                   compile edges ("build <object>: CUDA_COMPILER__<t>_<cfg> <source>");
//   Unix Makefiles: every "<dir>/CMakeFiles/<target>.dir/link.txt" and dlink.txt (the link and
//                   device-link command lines, run in <dir>; "@file" response files and nvcc's
//                   --options-file are expanded) and build.make ("Building CUDA object <object>").
// Order-only inputs of a link edge are not links: they are not in it. Which libraries a link step
// really read is what its link record says (link_record.hpp), which proof relies on instead.
// Paths in the result are absolute and lexically normal.
#pragma once

#include "record/artifact_kind.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct LinkEdge {
  std::string artifact;  // absolute path of what the step writes
  std::string target;    // the CMake target name ("" when not known)
  ArtifactKind kind = ArtifactKind::unknown;
  std::vector<std::string> objects;    // object files it reads (.o, .obj)
  std::vector<std::string> libraries;  // other artifacts of this tree it links
  bool appends = false;                // adds members to an archive that may exist already
  // What the build tool relinks it for: ninja's explicit and implicit inputs, make's rule
  // prerequisites in build.make. Empty and unknown for a step known only from its link record.
  std::vector<std::string> dependencies;
  bool dependencies_known = false;
};

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

// Pure parsers (unit-tested): the text of build.ninja, and one link.txt with the directory it runs in.
BuildGraph parse_ninja_manifest(std::string_view text, const std::string& build_dir);
std::vector<LinkEdge> parse_make_link_commands(std::string_view text, const std::string& run_dir,
                                               const std::string& target);
// The CUDA compiles of one target's build.make (object paths relative to run_dir).
std::vector<CompileEdge> parse_make_cuda_compiles(std::string_view text,
                                                  const std::string& run_dir);

// Splits one command line the way /bin/sh would for CMake's link lines (quotes, backslashes).
std::vector<std::string> split_command_line(std::string_view line);

// Replaces each "@file" word, and nvcc's "--options-file file" / "-optf file" (and their "=file"
// forms), by the words of that file (relative to run_dir); an unreadable file is kept as written.
std::vector<std::string> expand_response_files(const std::vector<std::string>& words,
                                               const std::string& run_dir);

// What one link or archive command line writes and reads (tools: any linker driver with -o, ar);
// nullopt when it is neither (ranlib, cmake -E rm, a compile: -c, -S or -E, ...). libraries: every
// other file operand. An "ar" that adds to an existing archive ("q", "r" without "c": CMake's
// ARCHIVE_APPEND) sets appends; "nvcc -dlink" (and any other link that writes an object file) has
// kind object.
std::optional<LinkEdge> describe_link_command(const std::vector<std::string>& words,
                                              const std::string& run_dir);

// Reads the build graph of a CMake build directory (either generator); empty when none is found.
BuildGraph load_build_graph(const std::string& build_dir);

}  // namespace nvfresh
