// Where a CMake build tree came from, from its CMakeCache.txt, and the rule `nvfresh space --clean`
// removes trees by: a tree is regenerable when its CMakeCache.txt was written for this very
// directory and names a source dir that still exists, holds a CMakeLists.txt, and lies outside
// the tree. Any other tree is ambiguous (and never removed), with the reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nvfresh {

struct CMakeCacheFacts {
  std::string home_directory;      // CMAKE_HOME_DIRECTORY: the source dir
  std::string cache_directory;     // CMAKE_CACHEFILE_DIR: the build tree cmake wrote this cache for
  std::string generator;           // CMAKE_GENERATOR: "Ninja", "Unix Makefiles", …
  std::string make_program;        // CMAKE_MAKE_PROGRAM: the build tool
  std::string cuda_compiler;       // CMAKE_CUDA_COMPILER: nvcc
  std::string cuda_host_compiler;  // CMAKE_CUDA_HOST_COMPILER: -ccbin ("" when unset)
};

// "" for a value the text does not have.
CMakeCacheFacts parse_cmake_cache(std::string_view text);

// nullopt when <tree>/CMakeCache.txt is not a readable regular file of a sane size.
std::optional<CMakeCacheFacts> read_cmake_cache(const std::string& tree);

struct TreeOrigin {
  bool regenerable = false;
  std::string source_dir;  // as CMakeCache.txt names it, "" when it names none
  std::string reason;      // why the tree is ambiguous; "" when regenerable
};

TreeOrigin classify_tree(const std::string& tree);

}  // namespace nvfresh
