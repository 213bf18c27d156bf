// A process environment as nvfresh passes it around: name -> value, sorted by name.
#pragma once

#include <map>
#include <string>

namespace nvfresh {

using Environment = std::map<std::string, std::string>;

// The value of `name` in env, or "" when it is not set.
inline std::string env_value(const Environment& env, const std::string& name)
{
  auto entry = env.find(name);
  return entry != env.end() ? entry->second : std::string();
}

// An XDG base directory: $<variable> when it is set to an absolute path, else $HOME/<home_relative>
// when HOME is absolute, else "" (xdg_base_dir(env, "XDG_CACHE_HOME", ".cache")).
inline std::string xdg_base_dir(const Environment& env, const std::string& variable,
                                const std::string& home_relative)
{
  if (std::string dir = env_value(env, variable); !dir.empty() && dir[0] == '/') {
    return dir;
  }
  if (std::string home = env_value(env, "HOME"); !home.empty() && home[0] == '/') {
    return home + "/" + home_relative;
  }
  return {};
}

}  // namespace nvfresh
