#include "doctor/setup_check.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace nvfresh {

SetupCheck passed(std::string name, std::string finding)
{
  return {std::move(name), true, std::move(finding), {}};
}

SetupCheck failed(std::string name, std::string finding, std::string fix)
{
  return {std::move(name), false, std::move(finding), std::move(fix)};
}

std::string format_setup_checks(const std::vector<SetupCheck>& checks)
{
  std::string out;
  for (const auto& check : checks) {
    out += fmt::format("{:<5} {}: {}\n", check.ok ? "OK" : "FAIL", check.name, check.finding);
    if (!check.ok && !check.fix.empty()) {
      out += fmt::format("      fix: {}\n", check.fix);
    }
  }
  size_t problems =
    std::count_if(checks.begin(), checks.end(), [](const auto& c) { return !c.ok; });
  out += problems == 0 ? fmt::format("nvfresh doctor: all {} checks OK\n", checks.size())
                       : fmt::format("nvfresh doctor: {} of {} checks found a problem\n", problems,
                                     checks.size());
  return out;
}

nlohmann::json setup_checks_json(const std::vector<SetupCheck>& checks)
{
  nlohmann::json list = nlohmann::json::array();
  for (const auto& check : checks) {
    nlohmann::json entry = {{"check", check.name}, {"ok", check.ok}, {"finding", check.finding}};
    if (!check.ok) {
      entry["fix"] = check.fix;
    }
    list.push_back(std::move(entry));
  }
  return {{"ok", setup_exit_status(checks) == 0}, {"checks", list}};
}

int setup_exit_status(const std::vector<SetupCheck>& checks)
{
  return std::all_of(checks.begin(), checks.end(), [](const auto& c) { return c.ok; }) ? 0 : 1;
}

}  // namespace nvfresh
