#include "commands/subcommand_options.hpp"

#include "commands/commands.hpp"

#include <fmt/format.h>

namespace nvfresh {

namespace {

std::string summary_of(std::string_view name)
{
  const Command* command = find_command(name);
  return command != nullptr ? std::string(command->summary) : std::string();
}

}  // namespace

SubcommandOptions::SubcommandOptions(std::string_view command_name)
  : m_app(summary_of(command_name), fmt::format("nvfresh {}", command_name))
{}

void SubcommandOptions::add_build_dir(std::string& build_dir)
{
  m_app.add_option("-C,--build-dir", build_dir, "the build tree (default: the working directory)");
}

void SubcommandOptions::add_json(bool& json)
{
  m_app.add_flag("--json", json, "machine-readable output");
}

std::optional<int> SubcommandOptions::parse(const std::vector<std::string>& args)
{
  try {
    m_app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    const int status = m_app.exit(error);
    return status == 0 ? 0 : k_exit_usage_error;
  }
}

}  // namespace nvfresh
