// "nvfresh [launcher…] nvcc args…": which word is nvcc, and which launchers stand before it.
// CMake turns a list launcher ("nvfresh;ccache") into leading argv words, so
// "ccache /usr/local/cuda/bin/nvcc -c a.cu" gives prefix {ccache}, compiler .../nvcc.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

struct CompilerChain {
  std::vector<std::string> prefix;  // launchers between nvfresh and nvcc
  std::string compiler;             // nvcc as written
  std::vector<std::string> args;    // nvcc's arguments
};

// nullopt when no word names nvcc (its file name contains "nvcc").
std::optional<CompilerChain> split_compiler_chain(const std::vector<std::string>& command);

}  // namespace nvfresh
