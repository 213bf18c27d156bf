#include "record/signature.hpp"

namespace nvfresh {

namespace {

constexpr const char* k_compile_env_names[] = {
  "NVCC_PREPEND_FLAGS",
  "NVCC_APPEND_FLAGS",
  "NVCC_CCBIN",
  "CPATH",
  "C_INCLUDE_PATH",
  "CPLUS_INCLUDE_PATH",
  "GCC_EXEC_PREFIX",
  "COMPILER_PATH",
  "SOURCE_DATE_EPOCH",
  // nvcc finds its host compiler (and the host compiler its assembler) through PATH. Recorded, but
  // not in the signature: what matters is what the lookups resolve to (lib/path_lookups.hpp).
  "PATH",
};

constexpr const char* k_terminal_env_names[] = {
  "TERM", "COLUMNS", "GCC_COLORS", "GCC_URLS", "TERM_URLS", "NO_COLOR",
};

template <std::size_t N>
std::map<std::string, std::string> variables_set(const Environment& env,
                                                 const char* const (&names)[N])
{
  std::map<std::string, std::string> set;
  for (const char* name : names) {
    auto entry = env.find(name);
    if (entry != env.end()) {
      set.emplace(name, entry->second);
    }
  }
  return set;
}

}  // namespace

std::map<std::string, std::string> compile_environment(const Environment& env)
{
  return variables_set(env, k_compile_env_names);
}

std::map<std::string, std::string> terminal_environment(const Environment& env)
{
  return variables_set(env, k_terminal_env_names);
}

Digest command_signature(const std::vector<std::string>& signature_args,
                         const std::map<std::string, std::string>& compile_env,
                         const std::string& working_dir)
{
  Hasher hasher;
  hasher.tag("nvfresh-signature-2");
  hasher.tag("args");
  for (const auto& arg : signature_args) {
    hasher.field(arg);
  }
  hasher.tag("env");
  for (const auto& [name, value] : compile_env) {
    if (name != k_path_variable) {  // PATH: judged by what it resolves (lib/path_lookups.hpp)
      hasher.field(name).field(value);
    }
  }
  hasher.tag("cwd").field(working_dir);
  return hasher.digest();
}

}  // namespace nvfresh
