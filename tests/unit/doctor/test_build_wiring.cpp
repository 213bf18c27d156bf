#include "doctor/build_wiring.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

BuildCommand compile(const std::string& object, const std::string& launcher, bool stamped)
{
  BuildCommand command;
  command.output = object;
  command.command =
    launcher + "/usr/local/cuda/bin/nvcc -x cu -c /s/" + object + ".cu -o " + object;
  command.description = "Building CUDA object " + object;
  command.inputs = {"/s/" + object + ".cu"};
  if (stamped) {
    command.inputs.push_back(".nvfresh/stamps/" + object + ".stamp");
  }
  return command;
}

BuildCommand sync_step()
{
  return {"CMakeFiles/nvfresh_sync", "cd /b && /opt/nvfresh sync -C /b", {}, ""};
}

TreeCommands tree(std::vector<BuildCommand> commands, const std::string& dir = "/b")
{
  auto runs = nvcc_runs_of(commands);
  return {dir, dir + "/build.ninja", {"ninja", std::move(commands)}, std::move(runs)};
}

}  // namespace

TEST_CASE("compiles: OK when every CUDA compile runs through nvfresh", "[build_wiring]")
{
  auto check = check_compiles_through_nvfresh(
    {tree({compile("a.o", "/opt/nvfresh ", true), compile("b.o", "/opt/nvfresh ccache ", true),
           sync_step()})});
  CHECK(check.ok);
  CHECK(check.finding == "all 2 CUDA compiles run through nvfresh (/b/build.ninja)");
}

TEST_CASE("compiles: names a custom command, a target without nvfresh and a nested tree",
          "[build_wiring]")
{
  BuildCommand custom{"gen.o", "cd /b && /usr/local/cuda/bin/nvcc -c /s/gen.cu -o gen.o", {}, ""};
  auto check = check_compiles_through_nvfresh(
    {tree({compile("a.o", "/opt/nvfresh ", true), compile("b.o", "", false), custom}),
     tree({compile("x.o", "", false)}, "/b/ext-prefix/src/ext-build")});
  CHECK_FALSE(check.ok);
  CHECK(check.finding.find("3 of 4 CUDA compiles bypass nvfresh") == 0);
  CHECK(check.finding.find("b.o: runs /usr/local/cuda/bin/nvcc without nvfresh") !=
        std::string::npos);
  CHECK(check.finding.find("gen.o: a custom command runs /usr/local/cuda/bin/nvcc") !=
        std::string::npos);
  CHECK(check.finding.find("x.o (in /b/ext-prefix/src/ext-build): a nested build tree") !=
        std::string::npos);
  CHECK(check.fix.find("CMAKE_PROJECT_INCLUDE") != std::string::npos);
}

TEST_CASE("compiles: a tree without build files or without CUDA compiles is a problem",
          "[build_wiring]")
{
  CHECK_FALSE(check_compiles_through_nvfresh({TreeCommands{"/b", "/b", {}, {}}}).ok);
  auto none = check_compiles_through_nvfresh({tree({sync_step()})});
  CHECK_FALSE(none.ok);
  CHECK(none.finding == "no step of /b/build.ninja compiles CUDA with nvcc");
}

TEST_CASE("sync: the step and every compile's stamp", "[build_wiring]")
{
  auto ok = check_sync_wired(tree({compile("a.o", "/opt/nvfresh ", true), sync_step()}));
  CHECK(ok.ok);
  auto missing = check_sync_wired(tree({compile("a.o", "/opt/nvfresh ", false)}));
  CHECK_FALSE(missing.ok);
  CHECK(missing.finding.find("no step of /b/build.ninja runs 'nvfresh sync'") == 0);
  CHECK(missing.fix.find("CMAKE_CUDA_COMPILER_LAUNCHER alone") != std::string::npos);
  auto unstamped = check_sync_wired(tree(
    {compile("a.o", "/opt/nvfresh ", true), compile("b.o", "/opt/nvfresh ", false), sync_step()}));
  CHECK_FALSE(unstamped.ok);
  CHECK(unstamped.finding.find("1 of 2 CUDA compiles have no nvfresh stamp") != std::string::npos);
  CHECK(unstamped.finding.find(": b.o") != std::string::npos);
  BuildCommand quoted_sync{"s", "\"/opt/nvfresh\" sync -C /b", {}, ""};
  CHECK(check_sync_wired(tree({compile("a.o", "/opt/nvfresh ", true), quoted_sync})).ok);
}
