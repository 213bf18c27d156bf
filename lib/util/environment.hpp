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

}  // namespace nvfresh
