#include "freshness.hpp"
#include "recorder.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

// One traced compile: nvcc runs a host compiler that is a shell script (#!/bin/sh), so the trace
// names the interpreter as the program and sees the script read like any other file; and cicc.
struct ScriptHostCompile {
  test::TempDir dir;
  CompileRequest request;
  CompilerChain chain;
  CompilePlan plan;
  std::string script;

  ScriptHostCompile()
  {
    std::string nvcc = dir.write("cuda/bin/nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 0.0'\n");
    std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
    std::string sh = dir.write("bin/sh", "the interpreter");
    std::string cicc = dir.write("cuda/nvvm/bin/cicc", "cicc");
    std::string header = dir.write("src/kernel.h", "#define TILE 64\n");
    script = dir.write("hostcc/g++", "#!/bin/sh\nexec /usr/bin/g++ \"$@\"\n");
    plan.working_dir = dir.path("build");
    plan.source = dir.write("src/a.cu", "#include \"kernel.h\"\n");
    plan.object = dir.write("build/a.o", "object bytes");
    plan.compiler_path = nvcc;
    plan.trace_file = dir.write("trace", "X 100 1 - " + nvcc + "\n" +
                                           "X 101 100 - " + sh + "\n" +
                                           "R 101 " + script + "\n" +
                                           "X 102 100 compute_80 " + cicc + "\n" +
                                           "R 102 " + header + "\n");
    chain.compiler = nvcc;
  }

  Record record()
  {
    FileHasher hasher;
    RecordingInput in{request, chain, plan, {coarse_now_ns() + 10'000'000'000, coarse_now_ns() + 10'000'000'000}};
    return make_record(in, hasher);
  }

  InputRole role_of(const Record& record, const std::string& path)
  {
    for (const auto& input : record.inputs) {
      if (input.file.path == path) {
        return input.role;
      }
    }
    FAIL("not recorded: " << path);
    return InputRole::header;
  }
};

} // namespace

TEST_CASE("a host compiler script named by -ccbin or NVCC_CCBIN is recorded as a tool", "[recorder]")
{
  ScriptHostCompile c;
  SECTION("-ccbin, absolute") { c.request.host_compiler = c.script; }
  SECTION("-ccbin, relative to the working directory") { c.request.host_compiler = "../hostcc/g++"; }
  SECTION("NVCC_CCBIN") { c.plan.child_env["NVCC_CCBIN"] = c.script; }
  Record record = c.record();
  REQUIRE(record.inputs_from_trace);
  CHECK(c.role_of(record, c.script) == InputRole::tool);
  CHECK(c.role_of(record, c.dir.path("src/kernel.h")) == InputRole::header);
  CHECK(c.role_of(record, c.dir.path("bin/sh")) == InputRole::tool);

  // So its content replaced in place (mtime kept) reads as the toolchain changing.
  auto old = stat_file(c.script);
  c.dir.write("hostcc/g++", "#!/bin/sh\nexec /usr/bin/g++ -DV2 \"$@\"\n");
  set_mtime_ns(c.script, old.mtime_ns);
  FileHasher hasher;
  auto verdict = FreshnessChecker(hasher, c.plan.child_env).check(record);
  REQUIRE(verdict.reasons.size() == 1);
  CHECK(verdict.reasons[0].kind == StaleKind::tool_changed);
  CHECK(verdict.reasons[0].path == c.script);
}

TEST_CASE("without a host compiler on the command line, a script read by the compile stays a header",
          "[recorder]")
{
  ScriptHostCompile c;
  Record record = c.record();
  CHECK(c.role_of(record, c.script) == InputRole::header);
}
