#include "util/installed_libraries.hpp"

#include "util/file_io.hpp"

#include <filesystem>

namespace nvfresh {

namespace fs = std::filesystem;

std::string locate_installed_library(std::string_view file_name)
{
  std::error_code error;
  const fs::path exe_dir = fs::canonical("/proc/self/exe", error).parent_path();
  for (const char* relative : {"../lib/nvfresh", "../lib", "."}) {
    const fs::path candidate = (exe_dir / relative / file_name).lexically_normal();
    if (stat_file(candidate.string()).is_regular) {
      return candidate.string();
    }
  }
  return {};
}

}  // namespace nvfresh
