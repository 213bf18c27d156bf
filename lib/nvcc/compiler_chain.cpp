#include "nvcc/compiler_chain.hpp"

#include <filesystem>

namespace nvfresh {

namespace {

bool names_nvcc(const std::string& word)
{
  if (word.empty() || word[0] == '-') {
    return false;
  }
  std::string name = std::filesystem::path(word).filename().string();
  return name.find("nvcc") != std::string::npos;
}

}  // namespace

std::optional<CompilerChain> split_compiler_chain(const std::vector<std::string>& command)
{
  for (size_t i = 0; i < command.size(); ++i) {
    if (names_nvcc(command[i])) {
      CompilerChain chain;
      for (size_t j = 0; j < i; ++j) {
        if (!command[j].empty()) {  // CMake can leave an empty word from an empty list element
          chain.prefix.push_back(command[j]);
        }
      }
      chain.compiler = command[i];
      chain.args.assign(command.begin() + static_cast<std::ptrdiff_t>(i) + 1, command.end());
      return chain;
    }
  }
  return std::nullopt;
}

}  // namespace nvfresh
