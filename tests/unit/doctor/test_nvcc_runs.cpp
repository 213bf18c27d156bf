#include "doctor/nvcc_runs.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

std::vector<NvccRun> runs(const std::string& command)
{
  return nvcc_runs_of(BuildCommand{"out.o", command, {}, ""});
}

}  // namespace

TEST_CASE("a CMake compile behind nvfresh is a compile through nvfresh", "[nvcc_runs]")
{
  auto found = runs("/opt/bin/nvfresh /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler "
                    "-ccbin=/usr/bin/g++-12 -MD -MT a.o -MF a.o.d -x cu -c /s/a.cu -o a.o");
  REQUIRE(found.size() == 1);
  CHECK(found[0].through_nvfresh);
  CHECK(found[0].compile);
  CHECK(found[0].nvcc == "/usr/local/cuda/bin/nvcc");
  CHECK(found[0].host_compiler == "/usr/bin/g++-12");
  CHECK(found[0].launchers().empty());
  CHECK(found[0].step == "out.o");
}

TEST_CASE("a custom command calling nvcc bypasses nvfresh; cd and cmake -E are no compilers",
          "[nvcc_runs]")
{
  auto found = runs("cd /b/nvcc_dir && /usr/bin/cmake -E echo nvcc && "
                    "/usr/local/cuda/bin/nvcc -c /s/gen.cu -o gen.o");
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].through_nvfresh);
  CHECK(found[0].compile);
  CHECK(found[0].before.empty());
}

TEST_CASE("launchers between and before nvfresh", "[nvcc_runs]")
{
  auto behind = runs("\"/opt/nvfresh\" /usr/bin/ccache nvcc -dc a.cu -o a.o");
  REQUIRE(behind.size() == 1);
  CHECK(behind[0].through_nvfresh);
  CHECK(behind[0].compile);
  CHECK(behind[0].launchers() == std::vector<std::string>{"/usr/bin/ccache"});
  CHECK(behind[0].launchers_before_nvfresh().empty());
  auto before = runs("ccache /opt/nvfresh nvcc -c a.cu -o a.o");
  REQUIRE(before.size() == 1);
  CHECK(before[0].launchers_before_nvfresh() == std::vector<std::string>{"ccache"});
  auto no_nvfresh = runs("sccache nvcc -c a.cu -o a.o");
  CHECK(no_nvfresh[0].launchers() == std::vector<std::string>{"sccache"});
  CHECK_FALSE(no_nvfresh[0].through_nvfresh);
}

TEST_CASE("nvcc runs that compile nothing: device link, --version, -E; -ccbin as a separate word",
          "[nvcc_runs]")
{
  CHECK_FALSE(runs("/usr/local/cuda/bin/nvcc -shared -dlink a.o b.o -o dlink.o")[0].compile);
  CHECK_FALSE(runs("nvcc --version")[0].compile);
  CHECK_FALSE(runs("nvcc -E -c a.cu")[0].compile);
  auto found = runs("nvcc -ccbin /opt/g++ -c a.cu; nvcc -ptx b.cu");
  REQUIRE(found.size() == 2);
  CHECK(found[0].host_compiler == "/opt/g++");
  CHECK(found[0].compile);
  CHECK(found[1].compile);
  CHECK(runs("/usr/bin/g++ -c a.cpp -o a.o").empty());
  CHECK(runs("/opt/nvfresh link-record -- /usr/bin/g++ a.o -o a").empty());
}

TEST_CASE("stamped steps; nvcc that is nvfresh under another name", "[nvcc_runs]")
{
  BuildCommand command{
    "a.o", "/b/bin/nvcc -c a.cu -o a.o", {"/s/a.cu", ".nvfresh/stamps/1.stamp"}, ""};
  auto plain = nvcc_runs_of(command);
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].stamped);
  CHECK_FALSE(plain[0].through_nvfresh);
  auto alias =
    nvcc_runs_of(command, [](const std::string& program) { return program == "/b/bin/nvcc"; });
  CHECK(alias[0].through_nvfresh);
  command.inputs.pop_back();
  CHECK_FALSE(nvcc_runs_of(command)[0].stamped);
}
