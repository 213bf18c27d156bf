// nvfresh's entry: a subcommand from the table, or a compile ("nvfresh nvcc ...").
// Nothing escapes: an unexpected failure still runs the compiler with the original arguments.
#include "commands/commands.hpp"
#include "compile.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  std::vector<std::string> args(argv + 1, argv + argc);
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
    return nvfresh::run_compile(args, nvfresh::current_environment(), runner);
  } catch (const std::exception& error) {
    std::fputs(fmt::format("nvfresh: {}\n", error.what()).c_str(), stderr);
    return 127;
  }
}
