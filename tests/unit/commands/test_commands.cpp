#include "commands/commands.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int succeeds(const std::vector<std::string>& args)
{
  return static_cast<int>(args.size()) + 5;
}

int throws_runtime_error(const std::vector<std::string>& /*args*/)
{
  throw std::runtime_error("records/x.rec: bad\nsecond line");
}

int throws_something_else(const std::vector<std::string>& /*args*/)
{
  throw 42;
}

// What run_guarded printed to `errors`, and its status.
std::pair<int, std::string> guarded(nvfresh::CommandFunction function)
{
  const nvfresh::Command command{"check", "test", function};
  std::FILE* errors = std::tmpfile();
  REQUIRE(errors != nullptr);
  const int status = nvfresh::run_guarded(command, {"a", "b"}, errors);
  std::rewind(errors);
  std::string printed;
  for (int c = std::fgetc(errors); c != EOF; c = std::fgetc(errors)) {
    printed.push_back(static_cast<char>(c));
  }
  std::fclose(errors);
  return {status, printed};
}

}  // namespace

TEST_CASE("commands: the top-level handler passes a subcommand's status through", "[commands]")
{
  CHECK(guarded(succeeds) == std::pair<int, std::string>{7, ""});
}

TEST_CASE("commands: an escaping exception is one line and exit 2, not an abort", "[commands]")
{
  CHECK(guarded(throws_runtime_error) ==
        std::pair<int, std::string>{2, "nvfresh check: records/x.rec: bad second line\n"});
  const auto [status, printed] = guarded(throws_something_else);
  CHECK(status == 2);
  CHECK(printed == "nvfresh check: an unexpected error that is not a std::exception\n");
}
