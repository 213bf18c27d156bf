#include "commands/subcommand_options.hpp"

#include "commands/commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace nvfresh {

namespace {

std::string summary_of(std::string_view name)
{
  const Command* command = find_command(name);
  return command != nullptr ? std::string(command->summary) : std::string();
}

template <typename Value>
CommandOption add_option_to(CLI::App& app, std::string_view names, Value& value,
                            std::string_view help)
{
  return CommandOption(app.add_option(std::string(names), value, std::string(help)));
}

}  // namespace

CommandOption& CommandOption::required()
{
  m_option->required();
  return *this;
}

CommandOption& CommandOption::needs(CommandOption other)
{
  m_option->needs(other.m_option);
  return *this;
}

CommandOption& CommandOption::excludes(CommandOption other)
{
  m_option->excludes(other.m_option);
  return *this;
}

CommandOption& CommandOption::in_range(int low, int high)
{
  m_option->check(CLI::Range(low, high));
  return *this;
}

CommandOption& CommandOption::in_range(std::size_t low, std::size_t high)
{
  m_option->check(CLI::Range(low, high));
  return *this;
}

CommandOption& CommandOption::in_range(double low, double high)
{
  m_option->check(CLI::Range(low, high));
  return *this;
}

CommandOption& CommandOption::check(std::function<std::string(const std::string&)> check,
                                    std::string type_name)
{
  m_option->check(CLI::Validator(
    [check = std::move(check)](std::string& text) { return check(text); }, std::move(type_name)));
  return *this;
}

CommandOption CommandLine::add_option(std::string_view names, std::string& value,
                                      std::string_view help)
{
  return add_option_to(*m_app, names, value, help);
}

CommandOption CommandLine::add_option(std::string_view names, std::vector<std::string>& values,
                                      std::string_view help)
{
  return add_option_to(*m_app, names, values, help);
}

CommandOption CommandLine::add_option(std::string_view names, std::size_t& value,
                                      std::string_view help)
{
  return add_option_to(*m_app, names, value, help);
}

CommandOption CommandLine::add_option(std::string_view names, std::optional<std::size_t>& value,
                                      std::string_view help)
{
  return add_option_to(*m_app, names, value, help);
}

CommandOption CommandLine::add_option(std::string_view names, double& value, std::string_view help)
{
  return add_option_to(*m_app, names, value, help);
}

CommandOption CommandLine::add_flag(std::string_view names, bool& value, std::string_view help)
{
  return CommandOption(m_app->add_flag(std::string(names), value, std::string(help)));
}

CommandLine CommandLine::add_subcommand(std::string_view name, std::string_view help)
{
  return CommandLine(m_app->add_subcommand(std::string(name), std::string(help)));
}

void CommandLine::require_subcommand()
{
  m_app->require_subcommand(1);
}

bool CommandLine::parsed() const
{
  return m_app->parsed();
}

void CommandLine::footer(std::string_view text)
{
  m_app->footer(std::string(text));
}

SubcommandOptions::SubcommandOptions(std::string_view command_name)
  : m_app(
      std::make_unique<CLI::App>(summary_of(command_name), fmt::format("nvfresh {}", command_name)))
{}

SubcommandOptions::~SubcommandOptions() = default;

void SubcommandOptions::add_build_dir(std::string& build_dir)
{
  app().add_option("-C,--build-dir", build_dir, "the build tree (default: the working directory)");
}

void SubcommandOptions::add_json(bool& json)
{
  app().add_flag("--json", json, "machine-readable output");
}

std::optional<int> SubcommandOptions::parse(const std::vector<std::string>& args)
{
  try {
    m_app->parse(std::vector<std::string>(args.rbegin(), args.rend()));
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    const int status = m_app->exit(error);
    return status == 0 ? 0 : k_exit_usage_error;
  }
}

}  // namespace nvfresh
