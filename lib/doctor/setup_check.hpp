// The one result model of `nvfresh doctor`: each check of the setup gives one line, OK with what it
// found, or the problem with its fix. Rendered as text (one line per check, the fix indented below
// a problem) or JSON; the exit status is 0 when every check is OK, else 1.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nvfresh {

struct SetupCheck {
  std::string name;  // "compiles", "sync", "tracer", "records", "cache", "compiler-cache", …
  bool ok = false;
  std::string finding;  // what was found: the OK line, or what is wrong
  std::string fix;      // what to do ("" when OK)
  bool operator==(const SetupCheck&) const = default;
};

SetupCheck passed(std::string name, std::string finding);
SetupCheck failed(std::string name, std::string finding, std::string fix);

// "OK    <name>: <finding>" or "FAIL  <name>: <finding>\n      fix: <fix>", one per check.
std::string format_setup_checks(const std::vector<SetupCheck>& checks);
nlohmann::json setup_checks_json(const std::vector<SetupCheck>& checks);
int setup_exit_status(const std::vector<SetupCheck>& checks);

}  // namespace nvfresh
