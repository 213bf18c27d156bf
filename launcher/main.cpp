// nvfresh's entry: a subcommand from the table, or a compile ("nvfresh nvcc ...").
// Nothing escapes: an unexpected failure still runs the compiler with the original arguments.
#include "commands/commands.hpp"
#include "compile/compile.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// Called through a symlink named like nvcc ("masquerade"): behave as "nvfresh nvcc ...". The real
// nvcc is then found on PATH, skipping nvfresh itself.
std::string masquerade_name(const char* argv0)
{
  std::string name = std::filesystem::path(argv0).filename().string();
  return name.find("nvcc") != std::string::npos ? name : std::string();
}

}  // namespace

int main(int argc, char** argv)
{
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto name = masquerade_name(argv[0]); !name.empty()) {
    args.insert(args.begin(), name);
  }
  if (args.empty()) {
    return nvfresh::run_help({});
  }
  if (const auto* command = nvfresh::find_command(args[0])) {
    return command->run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (args[0] == "-h" || args[0] == "--help") {
    return nvfresh::run_help({});
  }
  nvfresh::SystemProcessRunner runner;
  try {
    return nvfresh::run_compile(args, nvfresh::current_environment(), runner,
                                nvfresh::AfterUnchangedPath::exit_process);
  } catch (const std::exception& error) {
    std::fputs(fmt::format("nvfresh: {}\n", error.what()).c_str(), stderr);
    return 127;
  }
}
