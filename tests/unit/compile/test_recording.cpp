// record_compile: the race guard (an input written at or after the compile's start makes the
// record untrusted, and the next build compiles again; an mtime set into the future by hand does
// not), a trace that lost events, and what the trace makes of a host compiler script.
#include "compile/recording.hpp"
#include "freshness/freshness.hpp"
#include "record/record_root.hpp"
#include "record/signature.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_day_ns = 86'400'000'000'000;

// What plan_compile derives from the environment: the signature's part of it.
void plan_signature(CompilePlan& plan, const CompileRequest& request)
{
  plan.signature_env = compile_environment(plan.child_env);
  plan.signature = command_signature(request.signature_args, plan.signature_env, plan.working_dir);
}

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
    plan.record_root = dir.path(".nvfresh");
    plan.record_file = record_file_for(plan.record_root, plan.object);
    plan.child_env = {{"PATH", "/usr/bin:/bin"}};
  }

  // No trace: inputs from the command line only.
  Record record(std::int64_t start_ns, const std::string& trace = "")
  {
    CapturedOutput captured;
    std::optional<Record> previous;
    plan_signature(plan, request);
    last =
      record_compile({request, chain, plan, {start_ns, now_ns(), {}}, trace, captured, previous});
    auto loaded = load_record(plan.record_file);
    REQUIRE(loaded.record);
    return *loaded.record;
  }

  Outcome last;
};

}  // namespace

TEST_CASE("recorder: inputs older than the compile are trusted", "[recorder]")
{
  Fixture f;
  Record record = f.record(now_ns() + 1'000'000'000);
  INFO(record.untrusted_reason);
  REQUIRE(record.trusted);
  REQUIRE(record.history.back().event == "compiled");
  CHECK(f.last.kind == OutcomeKind::compiled);
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
  CHECK(f.last.kind == OutcomeKind::raced);
  CHECK(f.last.cause == Cause::input_changed_during_compile);
}

TEST_CASE("recording: a trace that lost events makes the record untrusted", "[recorder]")
{
  Fixture f;
  const std::string nvcc = f.plan.compiler_path;
  const std::string cicc = f.dir.write("cuda/nvvm/bin/cicc", "cicc");
  const std::string header = f.dir.write("k.h", "#define K 1\n");
  const std::string complete =
    "X 100 1 - " + nvcc + "\n" + "X 101 100 compute_80 " + cicc + "\n" + "R 101 " + header + "\n";
  Record traced = f.record(now_ns() + 1'000'000'000, complete);
  REQUIRE(traced.trusted);
  REQUIRE(traced.inputs_from_trace);
  Record lossy = f.record(now_ns() + 1'000'000'000, complete + "L 101 lost-3-events\n");
  CHECK_FALSE(lossy.trusted);
  CHECK(lossy.untrusted_reason.find("the tracer lost events") != std::string::npos);
  CHECK(f.last.kind == OutcomeKind::raced);
  CHECK(f.last.cause == Cause::trace_incomplete);
  FileHasher hasher;
  auto verdict = FreshnessChecker(hasher, f.plan.child_env).check(lossy);
  REQUIRE_FALSE(verdict.fresh());
  CHECK(verdict.reasons.front().kind == Cause::untrusted);
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
    std::string nvcc =
      dir.write("cuda/bin/nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 0.0'\n");
    std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
    std::string sh = dir.write("bin/sh", "the interpreter");
    std::string cicc = dir.write("cuda/nvvm/bin/cicc", "cicc");
    std::string header = dir.write("src/kernel.h", "#define TILE 64\n");
    script = dir.write("hostcc/g++", "#!/bin/sh\nexec /usr/bin/g++ \"$@\"\n");
    plan.working_dir = dir.path("build");
    plan.source = dir.write("src/a.cu", "#include \"kernel.h\"\n");
    plan.object = dir.write("build/a.o", "object bytes");
    plan.compiler_path = nvcc;
    trace = "X 100 1 - " + nvcc + "\n" + "X 101 100 - " + sh + "\n" + "R 101 " + script + "\n" +
            "X 102 100 compute_80 " + cicc + "\n" + "R 102 " + header + "\n";
    plan.record_root = dir.path("build/.nvfresh");
    plan.record_file = record_file_for(plan.record_root, plan.object);
    chain.compiler = nvcc;
  }

  std::string trace;

  Record record()
  {
    CapturedOutput captured;
    std::optional<Record> previous;
    std::int64_t later = coarse_now_ns() + 10'000'000'000;
    plan_signature(plan, request);
    record_compile({request, chain, plan, {later, later, {}}, trace, captured, previous});
    auto loaded = load_record(plan.record_file);
    REQUIRE(loaded.record);
    return *loaded.record;
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

}  // namespace

TEST_CASE("a host compiler script named by -ccbin or NVCC_CCBIN is recorded as a tool",
          "[recorder]")
{
  ScriptHostCompile c;
  SECTION("-ccbin, absolute")
  {
    c.request.host_compiler = c.script;
  }
  SECTION("-ccbin, relative to the working directory")
  {
    c.request.host_compiler = "../hostcc/g++";
  }
  SECTION("NVCC_CCBIN")
  {
    c.plan.child_env["NVCC_CCBIN"] = c.script;
  }
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
  CHECK(verdict.reasons[0].kind == Cause::tool_changed);
  CHECK(verdict.reasons[0].path == c.script);
}

TEST_CASE(
  "without a host compiler on the command line, a script read by the compile is data, no tool",
  "[recorder]")
{
  ScriptHostCompile c;
  Record record = c.record();
  // Read by sh, which is no C/C++ front end: its bytes count, comments and all.
  CHECK(c.role_of(record, c.script) == InputRole::data);
  CHECK(c.role_of(record, c.dir.path("src/kernel.h")) == InputRole::header);
}

TEST_CASE("mtime_dependence: __TIMESTAMP__ and GCC dependency pragmas, however spelled",
          "[recorder]")
{
  const std::string_view k_timestamp = "uses __TIMESTAMP__";
  const std::string_view k_pragma = "has a GCC dependency pragma";
  CHECK(mtime_dependence("const char* s = __TIMESTAMP__;\n") == k_timestamp);
  CHECK(mtime_dependence("#define STAMP __TIMESTAMP__\n") == k_timestamp);
  CHECK(mtime_dependence("// mentions __TIMESTAMP__ in a comment: counted\n") == k_timestamp);
  CHECK(mtime_dependence("-DSTAMP=__TIMESTAMP__") == k_timestamp);
  CHECK(mtime_dependence("#pragma GCC dependency \"dep.txt\"\n") == k_pragma);
  CHECK(mtime_dependence("int x;\n  #  pragma   GCC dependency \"dep.txt\" extra\n") == k_pragma);
  CHECK(mtime_dependence("#pragma GCC \\\n  dependency \"dep.txt\"\n") == k_pragma);
  CHECK(mtime_dependence("_Pragma(\"GCC dependency \\\"dep.txt\\\"\")\n") == k_pragma);
  CHECK(mtime_dependence("#define DEP _Pragma( \\\n \"GCC dependency \\\"f\\\"\")\n") == k_pragma);
  CHECK(mtime_dependence("DEPENDS_ON(GCC dependency \"dep.txt\")\n") == k_pragma);
  CHECK(mtime_dependence("#pragma \\\r\n  dependency \"f\"\r\n") == k_pragma);  // CRLF lines
  CHECK(mtime_dependence("dependency\n#pragma once\n") == "");
  CHECK(mtime_dependence("// a data dependency, pragmatic\n#pragma once\n") == "");
  CHECK(mtime_dependence("__TIMESTAMP\n__FILE__ __LINE__\n") == "");
  // The compile's own time: a compile now gives another object, as one after a touch does.
  CHECK(mtime_dependence("const char* built = __DATE__ \" \" __TIME__;\n") == "uses __TIME__");
  CHECK(mtime_dependence("const char* built = __DATE__;\n") == "uses __DATE__");
  CHECK(mtime_dependence("") == "");
}

TEST_CASE("a compile whose sources spell __TIMESTAMP__ or a dependency pragma says so",
          "[recorder]")
{
  Fixture f;
  const std::string nvcc = f.plan.compiler_path;
  const std::string cicc = f.dir.write("cuda/nvvm/bin/cicc", "cicc __TIMESTAMP__ in a tool");
  const std::string header = f.dir.write("k.h", "#define K 1\n");
  const std::string blob = f.dir.write("blob.bc", std::string("BC\0\0 __TIMESTAMP__", 19));
  const std::string trace = "X 100 1 - " + nvcc + "\n" + "X 101 100 compute_80 " + cicc + "\n" +
                            "R 101 " + header + "\nR 101 " + blob + "\n";
  const std::int64_t start = now_ns() + 1'000'000'000;
  CHECK(f.record(start, trace).mtime_dependent.empty());  // tools and binaries are not searched

  f.dir.write("k.h", "#define STAMP __TIMESTAMP__\n");
  Record record = f.record(start, trace);
  CHECK(record.mtime_dependent == header + " uses __TIMESTAMP__");

  f.dir.write("a.cu", "#pragma GCC dependency \"k.h\"\n");
  CHECK(f.record(start, trace).mtime_dependent ==
        f.plan.source + " has a GCC dependency pragma; " + header + " uses __TIMESTAMP__");

  f.dir.write("k.h", "#define K 1\n");
  f.dir.write("a.cu", "__global__ void k() {}\n");
  f.request.signature_args = {"-DSTAMP=__TIMESTAMP__"};
  CHECK(f.record(start, trace).mtime_dependent ==
        "the argument -DSTAMP=__TIMESTAMP__ uses __TIMESTAMP__");
}
