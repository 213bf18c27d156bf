#include "doctor/what_ran.hpp"

#include "digest_test_support.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_second = 1'000'000'000;

}  // namespace

TEST_CASE("a launcher must be there and answer as nvfresh", "[what_ran]")
{
  const LauncherFacts real{"/opt/nvfresh/bin/nvfresh", "/opt/nvfresh/bin/nvfresh",
                           "nvfresh 0.1.0\n", 2};
  auto ok = judge_launchers({real});
  CHECK(ok.ok);
  CHECK(ok.finding == "the compiles run /opt/nvfresh/bin/nvfresh (nvfresh 0.1.0)");

  const LauncherFacts gone{"/tmp/x/nvfresh", "", std::nullopt, 2};
  auto missing = judge_launchers({real, gone});
  CHECK_FALSE(missing.ok);
  CHECK(missing.finding.find("/tmp/x/nvfresh, the launcher of 2 CUDA compiles, is not there") == 0);

  const LauncherFacts script{"/w/nvfresh", "/w/nvfresh", std::nullopt, 2};
  auto named_only = judge_launchers({script});
  CHECK_FALSE(named_only.ok);
  CHECK(named_only.finding.find("is not nvfresh: '/w/nvfresh --version' printed nothing and "
                                "failed") != std::string::npos);

  const LauncherFacts other{"nvfresh", "/usr/bin/nvfresh", "nvcc: NVIDIA (R) Cuda compiler\n", 1};
  CHECK_FALSE(judge_launchers({other}).ok);
  CHECK(judge_launchers({}).ok);
}

TEST_CASE("each built object needs a record as new as itself", "[what_ran]")
{
  LastBuildFacts facts;
  facts.compiles = 2;
  auto not_built = judge_last_build(facts);
  CHECK(not_built.ok);
  CHECK(not_built.finding.find("not built yet") == 0);

  facts.objects = {{"/b/a.o", 10 * k_second, 10 * k_second},
                   {"/b/b.o", 10 * k_second, 10 * k_second - k_second / 2}};
  auto recorded = judge_last_build(facts);
  CHECK(recorded.ok);
  CHECK(recorded.finding == "nvfresh recorded the compile of each of the 2 built objects");

  facts.objects[1].record_mtime_ns = std::nullopt;  // built with NVFRESH_DISABLE=1
  auto unrecorded = judge_last_build(facts);
  CHECK_FALSE(unrecorded.ok);
  CHECK(unrecorded.finding ==
        "1 of 2 built objects were made by a compile nvfresh did not record: /b/b.o");

  facts.objects[1].record_mtime_ns = 5 * k_second;  // rebuilt after the record, without nvfresh
  CHECK_FALSE(judge_last_build(facts).ok);
}

TEST_CASE("NVFRESH_DISABLE where doctor runs fails", "[what_ran]")
{
  LastBuildFacts facts;
  facts.disabled_here = true;
  auto disabled = judge_last_build(facts);
  CHECK_FALSE(disabled.ok);
  CHECK(disabled.finding.find("NVFRESH_DISABLE is set here") == 0);
}

TEST_CASE("an object with device code from a step that runs no nvcc fails the check", "[what_ran]")
{
  LastBuildFacts facts;
  facts.compiles = 1;
  facts.objects = {{"/b/a.o", 10 * k_second, 10 * k_second}};
  facts.device_objects_of_other_steps = {"/b/wrapped.o"};
  auto one = judge_last_build(facts);
  CHECK_FALSE(one.ok);
  CHECK(one.finding == "1 built object holds CUDA device code but came from a step that runs no "
                       "nvcc, so nvfresh never saw its compile: /b/wrapped.o");
  CHECK(one.fix.find("a wrapper not named nvcc") == 0);

  facts.objects.clear();  // a tree whose only CUDA compiles go through the wrapper
  facts.device_objects_of_other_steps.push_back("/b/second.o");
  auto two = judge_last_build(facts);
  CHECK_FALSE(two.ok);
  CHECK(two.finding.find("2 built objects hold CUDA device code but came from steps that run no "
                         "nvcc") == 0);
}

TEST_CASE("device code is a fatbin section of a relocatable ELF object", "[what_ran]")
{
  CHECK_FALSE(holds_device_code(""));
  CHECK_FALSE(holds_device_code("not an object at all"));
  CHECK_FALSE(holds_device_code(std::string("\x7f"
                                            "ELF\x02\x01\x01",
                                            7)));                              // cut short
  CHECK(holds_device_code(nvfresh::test::load_object("k_sm80.o")));            // nvcc -c
  CHECK(holds_device_code(nvfresh::test::load_object("k_sm80_rdc.o")));        // nvcc -dc
  CHECK_FALSE(holds_device_code(nvfresh::test::load_object("k_sm80.cubin")));  // not relocatable
}
