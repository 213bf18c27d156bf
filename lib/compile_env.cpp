#include "compile_env.hpp"

namespace nvfresh {

namespace {

constexpr const char* k_compile_env_names[] = {
  "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN",      "CPATH",           "C_INCLUDE_PATH",
  "CPLUS_INCLUDE_PATH", "GCC_EXEC_PREFIX",   "COMPILER_PATH",   "SOURCE_DATE_EPOCH",
};

} // namespace

std::map<std::string, std::string> compile_environment(const Environment& env)
{
  std::map<std::string, std::string> relevant;
  for (const char* name : k_compile_env_names) {
    auto entry = env.find(name);
    if (entry != env.end()) {
      relevant.emplace(name, entry->second);
    }
  }
  return relevant;
}

} // namespace nvfresh
