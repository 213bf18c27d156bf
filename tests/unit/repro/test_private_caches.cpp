#include "repro/private_caches.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

TEST_CASE("compile caches: every run gets each variable pointed at its own directory",
          "[compile_caches]")
{
  std::set<std::string> variables;
  for (const auto& cache : nvfresh::compile_caches()) {
    variables.insert(std::string(cache.variable));
    CHECK_FALSE(cache.tool.empty());
    CHECK_FALSE(cache.holds.empty());
  }
  for (const char* wanted : {"CUTE_DSL_CACHE_DIR", "TRITON_CACHE_DIR", "CUDA_CACHE_PATH",
                             "TORCHINDUCTOR_CACHE_DIR", "CUPY_CACHE_DIR", "NUMBA_CACHE_DIR"}) {
    CHECK(variables.count(wanted) == 1);
  }
  const auto directories = nvfresh::private_cache_directories("/scratch/run-00003/cache");
  REQUIRE(directories.size() == variables.size());
  for (const auto& [variable, directory] : directories) {
    CHECK(directory == "/scratch/run-00003/cache/" + variable);
  }
}

TEST_CASE("compile caches: one warning per inherited setting", "[compile_caches]")
{
  CHECK(nvfresh::inherited_cache_warnings({{"PATH", "/bin"}}).empty());
  const auto warnings = nvfresh::inherited_cache_warnings(
    {{"TRITON_CACHE_DIR", "/home/u/.triton/cache"}, {"CUTE_DSL_CACHE_DIR", "/c"}});
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], Catch::StartsWith("warning: CUTE_DSL_CACHE_DIR=/c (CuTe DSL cache) is "
                                            "set here; each run uses its own empty directory"));
  CHECK_THAT(warnings[1], Catch::Contains("TRITON_CACHE_DIR=/home/u/.triton/cache (Triton cache)"));
}
