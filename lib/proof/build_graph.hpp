// The link steps of a CMake build tree: which artifact (.so, .a, executable) is linked from which
// objects and which other artifacts. Read from the generator's own files, never by running a build:
//   Ninja:          build.ninja's link edges ("build <artifact>: <LANG>_<KIND>_LINKER__<t>_ <in> | <implicit>")
//                   and its phony target aliases ("build <target>: phony <artifact>");
//   Unix Makefiles: every "<dir>/CMakeFiles/<target>.dir/link.txt" (the link command lines, run in
//                   <dir>; "@file" response files are expanded).
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
};

struct BuildGraph {
  std::string generator;  // "ninja", "make", or "" when no build graph was found
  std::vector<LinkEdge> edges;

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

// Splits one command line the way /bin/sh would for CMake's link lines (quotes, backslashes).
std::vector<std::string> split_command_line(std::string_view line);

// Replaces each "@file" word by the words of that file (relative to run_dir); unreadable: kept.
std::vector<std::string> expand_response_files(const std::vector<std::string>& words,
                                               const std::string& run_dir);

// What one link or archive command line writes and reads (tools: any linker driver with -o, ar);
// nullopt when it is neither (ranlib, cmake -E rm, a compile: -c, -S or -E, ...). libraries: every
// other file operand.
std::optional<LinkEdge> describe_link_command(const std::vector<std::string>& words,
                                              const std::string& run_dir);

// Reads the build graph of a CMake build directory (either generator); empty when none is found.
BuildGraph load_build_graph(const std::string& build_dir);

}  // namespace nvfresh
