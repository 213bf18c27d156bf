// make_record's race guard: an input written at or after the compile's start makes the record
// untrusted (the next build compiles again); an mtime set into the future by hand does not.
#include "recorder.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_day_ns = 86'400'000'000'000;

struct Fixture {
  test::TempDir dir;
  CompileRequest request;
  CompilerChain chain;
  CompilePlan plan;

  Fixture()
  {
    auto nvcc = dir.write("bin/nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0'\n");
    std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
    chain.compiler = nvcc;
    plan.working_dir = dir.path();
    plan.compiler_path = nvcc;
    plan.source = dir.write("a.cu", "__global__ void k() {}\n");
    plan.object = dir.write("a.o", "object bytes");
    plan.private_dir = dir.path("private");
    plan.trace_file = dir.path("private/trace");  // absent: inputs from the command line only
    plan.child_env = {{"PATH", "/usr/bin:/bin"}};
  }

  Record record(std::int64_t start_ns)
  {
    FileHasher hasher;
    return make_record({request, chain, plan, {start_ns, now_ns()}, std::nullopt, std::nullopt},
                       hasher);
  }
};

} // namespace

TEST_CASE("recorder: inputs older than the compile are trusted", "[recorder]")
{
  Fixture f;
  Record record = f.record(now_ns() + 1'000'000'000);
  INFO(record.untrusted_reason);
  REQUIRE(record.trusted);
  REQUIRE(record.history.back().event == "compiled");
}

TEST_CASE("recorder: an input written during the compile makes the record untrusted", "[recorder]")
{
  Fixture f;
  std::int64_t start = now_ns() - 1'000'000'000;
  f.dir.write("a.cu", "__global__ void q() {}\n");
  SECTION("plain write") {}
  SECTION("write, then the old mtime put back (ctime tells)")
  {
    set_mtime_ns(f.plan.source, start - k_day_ns);
  }
  SECTION("write, then an mtime far in the future")
  {
    set_mtime_ns(f.plan.source, now_ns() + 30 * k_day_ns);
  }
  Record record = f.record(start);
  REQUIRE_FALSE(record.trusted);
  REQUIRE(record.untrusted_reason.find("a.cu changed while the object compiled") !=
          std::string::npos);
  REQUIRE(record.history.back().event == "raced");
}

TEST_CASE("recorder: an mtime set into the future before the compile is not a race", "[recorder]")
{
  Fixture f;
  set_mtime_ns(f.plan.source, now_ns() + 30 * k_day_ns);  // touch -d, tar x, a skewed clock
  Record record = f.record(now_ns() + 1'000'000'000);
  INFO(record.untrusted_reason);
  REQUIRE(record.trusted);
}

TEST_CASE("recorder: the race guard's start is after a file saved just before it", "[recorder]")
{
  // Read the file's times between two writes, as editors and generators do: with multigrain
  // timestamps the second write is then stamped with the fine clock, ahead of the coarse one.
  test::TempDir dir;
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto path = dir.write("gen.h", "#define A 1\n");
    stat_file(path);
    dir.write("gen.h", "#define A 2\n");
    FileStat before = stat_file(path);
    std::int64_t start = race_guard_start_ns();
    INFO("attempt " << attempt << ": ctime " << before.ctime_ns << ", start " << start);
    REQUIRE(before.mtime_ns < start);
    REQUIRE(before.ctime_ns < start);
    REQUIRE(start <= now_ns());
    dir.write("gen.h", "#define A 3\n");  // a write after the start is always seen
    REQUIRE(stat_file(path).ctime_ns >= start);
  }
}
