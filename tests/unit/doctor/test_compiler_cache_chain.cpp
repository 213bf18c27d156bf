#include "doctor/compiler_cache_chain.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

std::vector<NvccRun> runs(const std::string& command)
{
  return nvcc_runs_of(BuildCommand{"a.o", command, {}, ""});
}

const std::vector<ResolvedProgram> k_plain = {{"nvcc", "nvcc", "/usr/local/cuda/bin/nvcc"},
                                              {"host compiler", "g++", "/usr/bin/g++-12"}};

}  // namespace

TEST_CASE("compiler-cache: none in the chain", "[compiler_cache_chain]")
{
  auto check = check_compiler_caches(runs("/opt/nvfresh nvcc -c a.cu"), k_plain);
  CHECK(check.ok);
  CHECK(check.finding == "no compiler cache in the CUDA chain (nvcc /usr/local/cuda/bin/nvcc, "
                         "host compiler /usr/bin/g++-12)");
}

TEST_CASE("compiler-cache: ccache behind nvfresh recompiles, sccache is left out",
          "[compiler_cache_chain]")
{
  auto ccache = check_compiler_caches(runs("/opt/nvfresh /usr/bin/ccache nvcc -c a.cu"), k_plain);
  CHECK_FALSE(ccache.ok);
  CHECK(ccache.finding.find("ccache stands between nvfresh and nvcc in 1 compiles: nvfresh runs "
                            "it with CCACHE_RECACHE=1") == 0);
  CHECK(ccache.fix.find("NVFRESH_KEEP_CUDA_LAUNCHER") != std::string::npos);
  auto sccache = check_compiler_caches(runs("/opt/nvfresh sccache nvcc -c a.cu"), k_plain);
  CHECK(sccache.finding.find("nvfresh leaves sccache out of every compile") != std::string::npos);
}

TEST_CASE("compiler-cache: before nvfresh, or as the host compiler", "[compiler_cache_chain]")
{
  auto before = check_compiler_caches(runs("ccache /opt/nvfresh nvcc -c a.cu"), k_plain);
  CHECK_FALSE(before.ok);
  CHECK(before.finding.find("ccache stands before nvfresh") == 0);
  auto host = check_compiler_caches(runs("/opt/nvfresh nvcc -c a.cu"),
                                    {{"host compiler", "g++", "/usr/bin/ccache"}});
  CHECK_FALSE(host.ok);
  CHECK(host.finding.find("the host compiler g++ is /usr/bin/ccache") == 0);
}
