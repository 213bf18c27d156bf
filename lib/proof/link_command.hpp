// One link or archive command line (a linker driver with -o, ar, nvcc -dlink) read as the artifact
// it writes and the objects and libraries it reads: what the Makefiles generator's link.txt and
// dlink.txt lines say (make_files.hpp), and what `nvfresh link-record` sees a build run. Response
// files ("@file") and nvcc's options files are expanded first.
// Paths in the result are absolute and lexically normal.
#pragma once

#include "record/artifact_kind.hpp"

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

// ".o" and ".obj" files.
bool is_object_path(std::string_view path);

// path made absolute against base, lexically normal: how a build graph names files.
std::string graph_path(const std::string& path, const std::string& base);

// Replaces each "@file" word by the words of that file (relative to run_dir, split as /bin/sh
// would), then, in the words after nvcc (a word naming a file "nvcc"), every --options-file as nvcc
// expands it (nvcc/command_line.hpp). An unreadable "@file" is kept as written; when an options file
// cannot be read, nvcc's words are kept as they are.
std::vector<std::string> expand_response_files(const std::vector<std::string>& words,
                                               const std::string& run_dir);

// What one link or archive command line writes and reads (tools: any linker driver with -o, ar);
// nullopt when it is neither (ranlib, cmake -E rm, a compile: -c, -S or -E, ...). libraries: every
// other file operand. An "ar" that adds to an existing archive ("q", "r" without "c": CMake's
// ARCHIVE_APPEND) sets appends; "nvcc -dlink" (and any other link that writes an object file) has
// kind object.
std::optional<LinkEdge> describe_link_command(const std::vector<std::string>& words,
                                              const std::string& run_dir);

}  // namespace nvfresh
