// Test-only driver until the launcher's subcommand table wires `compare`:
// `digest_tool compare A B [--json]` runs exactly what `nvfresh compare A B [--json]` will run.
#include "commands/compare.hpp"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args.front() != "compare") {
    std::fprintf(stderr, "usage: digest_tool compare A B [--json]\n");
    return 2;
  }
  return nvfresh::run_compare(std::vector<std::string>(args.begin() + 1, args.end()));
}
