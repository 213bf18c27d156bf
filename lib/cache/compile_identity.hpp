// What the object cache needs to know about a compile before it runs: the parts of its command
// signature that its keys hash (cache/object_cache.hpp) and that the remote's Actions spell
// (cache/remote_cache.hpp). Its own header, so that the remote's Action builders and the object
// cache both take it from below them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

// The version of the object cache's keys (manifest and result keys): hashed first into each, and
// the salt of the remote's manifest and result Actions (cache/remote_cache.hpp). Step keys have
// their own (k_step_key_version, cache/step_entry.hpp).
inline constexpr std::string_view k_cache_key_version = "nvfresh-cache-1";

struct CompileIdentity {
  std::vector<std::string> signature_args;
  std::map<std::string, std::string> signature_env;  // as in the record (PATH included)
  std::string working_dir;
  std::string source;      // absolute
  std::string compiler;    // the nvcc that runs, canonical
  std::string build_tree;  // the directory holding the record root
  std::string object;      // absolute: the remote result Action's output (remote_cache.hpp)
};

}  // namespace nvfresh
