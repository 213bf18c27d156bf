// The option plumbing every subcommand shares: a CLI::App whose description is the command's
// one-line help from the subcommand table (one source of help text), the common options
// (-C/--build-dir, --json), and parse errors turned into nvfresh's exit statuses: --help exits 0, a
// usage error prints CLI11's message and exits 2 ("cannot tell"), never CLI11's own 105-109.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

inline constexpr int k_exit_usage_error = 2;

class SubcommandOptions {
public:
  explicit SubcommandOptions(std::string_view command_name);

  CLI::App& app() { return m_app; }
  void add_build_dir(std::string& build_dir);  // -C,--build-dir (default: the working directory)
  void add_json(bool& json);                   // --json

  // nullopt: parsed, go on; otherwise the exit status to return now.
  std::optional<int> parse(const std::vector<std::string>& args);

private:
  CLI::App m_app;
};

}  // namespace nvfresh
