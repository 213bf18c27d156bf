// The option plumbing every subcommand shares: a command line whose description is the command's
// one-line help from the subcommand table (one source of help text), the common options
// (-C/--build-dir, --json), and parse errors turned into nvfresh's exit statuses: --help exits 0, a
// usage error prints CLI11's message and exits 2 ("cannot tell"), never CLI11's own 105-109.
// CLI11 is header-only (Debian ships no compiled CLI11) and heavy to compile: only
// subcommand_options.cpp includes it, the commands see the small interface below
// (bench/README.md, "Build and test times").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace nvfresh {

inline constexpr int k_exit_usage_error = 2;

// One option, flag or positional argument, to refine after adding it.
class CommandOption {
public:
  explicit CommandOption(CLI::Option* option) : m_option(option) {}

  CommandOption& required();
  CommandOption& needs(CommandOption other);     // given only together with `other`
  CommandOption& excludes(CommandOption other);  // never together with `other`
  CommandOption& in_range(int low, int high);
  CommandOption& in_range(std::size_t low, std::size_t high);
  CommandOption& in_range(double low, double high);
  // `check` returns what is wrong with the value as given, or "" when it is good; `type_name`
  // stands for the value in --help (DAYS).
  CommandOption& check(std::function<std::string(const std::string&)> check, std::string type_name);

private:
  CLI::Option* m_option;
};

// The options of a command or of one of its subcommands (`nvfresh cache evict`).
class CommandLine {
public:
  explicit CommandLine(CLI::App* app) : m_app(app) {}

  CommandOption add_option(std::string_view names, std::string& value, std::string_view help);
  CommandOption add_option(std::string_view names, std::vector<std::string>& values,
                           std::string_view help);
  CommandOption add_option(std::string_view names, std::size_t& value, std::string_view help);
  CommandOption add_option(std::string_view names, std::optional<std::size_t>& value,
                           std::string_view help);
  CommandOption add_option(std::string_view names, double& value, std::string_view help);
  CommandOption add_flag(std::string_view names, bool& value, std::string_view help);

  CommandLine add_subcommand(std::string_view name, std::string_view help);
  void require_subcommand();  // exactly one
  bool parsed() const;        // a subcommand: given on this command line
  void footer(std::string_view text);

private:
  CLI::App* m_app;
};

class SubcommandOptions {
public:
  explicit SubcommandOptions(std::string_view command_name);
  ~SubcommandOptions();
  SubcommandOptions(const SubcommandOptions&) = delete;
  SubcommandOptions& operator=(const SubcommandOptions&) = delete;

  CommandLine app() { return CommandLine(m_app.get()); }
  void add_build_dir(std::string& build_dir);  // -C,--build-dir (default: the working directory)
  void add_json(bool& json);                   // --json

  // nullopt: parsed, go on; otherwise the exit status to return now.
  std::optional<int> parse(const std::vector<std::string>& args);

private:
  std::unique_ptr<CLI::App> m_app;
};

}  // namespace nvfresh
