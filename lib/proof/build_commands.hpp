// Every command a CMake build tree's generator files tell the build tool to run, with the inputs
// of its step: build.ninja's edges (and the files it includes) with their rule's command expanded
// ($in, $out, the edge's, the rule's and the file's variables), or the recipes of every
// CMakeFiles/<target>.dir/build.make of a Makefiles tree. Read from the files only, never by
// running the build tool. What `nvfresh doctor` reads to see which steps run nvcc and how.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct BuildCommand {
  std::string output;               // the step's first output, as the generator file writes it
  std::string command;              // the shell command line, variables expanded where known
  std::vector<std::string> inputs;  // explicit, implicit and order-only inputs / prerequisites
  std::string description;          // ninja's description ("Building CUDA object …"), else ""
};

struct BuildCommands {
  std::string generator;  // "ninja", "make", or "" when neither build.ninja nor Makefile is there
  std::vector<BuildCommand> commands;
};

// Pure (unit-tested). `read_include` returns the text of a file named by an include or subninja
// line (relative to the build dir), or "" when it cannot be read.
using IncludeReader = std::string (*)(const std::string& build_dir, const std::string& path);
std::vector<BuildCommand> parse_ninja_commands(std::string_view text, const std::string& build_dir,
                                               IncludeReader read_include);

// Pure (unit-tested): one build.make; make's own variables ($(CUDA_FLAGS)) stay as written.
std::vector<BuildCommand> parse_make_recipes(std::string_view text);

// The commands of the build tree at build_dir (Ninja when build.ninja is there, else Makefiles;
// not those of a nested build tree below it, one with its own CMakeCache.txt).
BuildCommands load_build_commands(const std::string& build_dir);

}  // namespace nvfresh
