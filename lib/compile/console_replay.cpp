#include "compile/console_replay.hpp"

#include "record/signature.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include <unistd.h>

namespace nvfresh {

namespace {

// The streams that were terminals, in words.
std::string describe_terminals(const std::string& terminals)
{
  return terminals.empty() ? std::string("no terminal") : "a terminal (" + terminals + ")";
}

std::string describe_variables(const std::map<std::string, std::string>& variables)
{
  std::vector<std::string> parts;
  parts.reserve(variables.size());
  for (const auto& [name, value] : variables) {
    parts.push_back(fmt::format("{}={}", name, value));
  }
  return parts.empty() ? std::string("none set") : fmt::format("{}", fmt::join(parts, " "));
}

}  // namespace

std::string console_replay_doubt(const Record& previous, const std::string& terminals_now,
                                 const Environment& env_now)
{
  if (previous.console_out.empty() && previous.console_err.empty()) {
    return {};
  }
  if (terminals_now != previous.console_terminals) {
    return fmt::format("the output went to {} then and goes to {} now: the compiler may print it "
                       "differently (colours)",
                       describe_terminals(previous.console_terminals),
                       describe_terminals(terminals_now));
  }
  if (terminals_now.empty()) {
    return {};
  }
  const auto& then_env = previous.console_terminal_env;
  const auto now_env = terminal_environment(env_now);
  if (now_env != then_env) {
    return fmt::format("the terminal's settings changed ({} then, {} now): the compiler may print "
                       "its messages differently",
                       describe_variables(then_env), describe_variables(now_env));
  }
  return {};
}

void replay_console(const Record& record)
{
  if (record.console_mode == "combined") {
    write_fully(STDOUT_FILENO, record.console_out);
    return;
  }
  write_fully(STDOUT_FILENO, record.console_out);
  write_fully(STDERR_FILENO, record.console_err);
}

}  // namespace nvfresh
