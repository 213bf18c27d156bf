// The orchestrator (run_compile) against a fake runner: one case per outcome of the outcome
// model. The invariants: a runner that cannot start the compiler means one plain run; a failed
// nvcc leaves no record and its status passes through; once nvcc succeeded it never runs again,
// whatever recording does; a skip runs nothing; every outcome lands in the events log with its
// cause.
#include "compile/compile.hpp"
#include "fakes.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

struct Tree {
  test::TempDir dir;
  std::string nvcc;
  std::string cicc;
  std::string source;
  std::string header;
  std::string object;
  std::string record_root;
  Environment env;
  test::FakeProcessRunner runner;

  Tree()
  {
    nvcc = dir.write("cuda/bin/nvcc", "#!/bin/sh\nexit 0\n");
    std::filesystem::permissions(nvcc, std::filesystem::perms::owner_all);
    cicc = dir.write("cuda/nvvm/bin/cicc", "cicc");
    header = dir.write("src/kernel.h", "#define TILE 64\n");
    source = dir.write("src/a.cu", "#include \"kernel.h\"\n__global__ void k() {}\n");
    object = dir.path("build/a.o");
    std::filesystem::create_directories(dir.path("build"));
    record_root = dir.path("build/.nvfresh");
    env = {{"PATH", dir.path("cuda/bin") + ":/usr/bin:/bin"},
           {"NVFRESH_RECORD_DIR", record_root},
           {"NVFRESH_TRACE_LIB", NVFRESH_TEST_TRACE_LIB},
           {"HOME", dir.path()}};
    runner.object = object;
    runner.trace_lines = {"X 100 1 - " + nvcc, "X 101 100 compute_80 " + cicc, "R 101 " + source,
                          "R 101 " + header};
  }

  std::vector<std::string> command() const { return {nvcc, "-c", source, "-o", object}; }
  int compile() { return run_compile(command(), env, runner); }

  std::vector<BuildEvent> events() const { return read_events(record_root); }
  Outcome last_outcome() const
  {
    auto all = events();
    REQUIRE_FALSE(all.empty());
    return all.back().outcome;
  }
  bool recorded() const
  {
    return load_record(record_file_for(record_root, object)).record.has_value();
  }
};

}  // namespace

TEST_CASE("compile: the first compile runs nvcc once and records it", "[compile]")
{
  Tree tree;
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.captured_runs == 1);
  CHECK(tree.runner.plain_runs == 0);
  CHECK(tree.recorded());
  CHECK(tree.last_outcome().kind == OutcomeKind::compiled);
  CHECK(tree.last_outcome().cause == Cause::no_record);
  // nvcc got the tracer, the nested-call marker and the trace socket, and the build's own TMPDIR
  CHECK(tree.runner.last_env.at("LD_PRELOAD") == NVFRESH_TEST_TRACE_LIB);
  CHECK(tree.runner.last_env.count("NVFRESH_ACTIVE") == 1);
  CHECK(tree.runner.last_env.at(k_trace_socket_variable).starts_with("@nvfresh-trace-"));
  CHECK(tree.runner.last_env.count("TMPDIR") == 0);
}

TEST_CASE("compile: an unchanged compile is skipped and runs nothing", "[compile]")
{
  Tree tree;
  REQUIRE(tree.compile() == 0);
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.captured_runs == 1);
  CHECK(tree.runner.plain_runs == 0);
  CHECK(tree.last_outcome().kind == OutcomeKind::skipped);
  CHECK(tree.last_outcome().cause == Cause::unchanged);
}

TEST_CASE("compile: a header changed in content compiles again, with that cause", "[compile]")
{
  Tree tree;
  REQUIRE(tree.compile() == 0);
  auto old = stat_file(tree.header);
  tree.dir.write("src/kernel.h", "#define TILE 32\n");
  set_mtime_ns(tree.header, old.mtime_ns);  // the mtime says nothing
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.captured_runs == 2);
  CHECK(tree.last_outcome().kind == OutcomeKind::compiled);
  CHECK(tree.last_outcome().cause == Cause::input_changed);
  CHECK(tree.last_outcome().detail.find("kernel.h changed") != std::string::npos);
}

TEST_CASE("compile: nvcc fails: its status passes through and nothing is recorded", "[compile]")
{
  Tree tree;
  tree.runner.exit_code = 2;
  REQUIRE(tree.compile() == 2);
  CHECK(tree.runner.captured_runs == 1);
  CHECK(tree.runner.plain_runs == 0);
  CHECK_FALSE(tree.recorded());
  CHECK(tree.last_outcome().kind == OutcomeKind::failed);
  CHECK(tree.last_outcome().cause == Cause::nvcc_exit_status);
  CHECK(tree.last_outcome().detail == "nvcc exited with status 2");
}

TEST_CASE("compile: a runner that cannot start the compiler falls back to one plain run",
          "[compile]")
{
  Tree tree;
  tree.runner.throw_on_capture = true;
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.captured_runs == 0);
  CHECK(tree.runner.plain_runs == 1);
  CHECK(tree.runner.last_argv == tree.command());
  CHECK(tree.last_outcome().kind == OutcomeKind::fell_back);
  CHECK(tree.last_outcome().cause == Cause::runner_failed);
}

TEST_CASE("compile: a compiler that cannot be started is not started twice", "[compile]")
{
  Tree tree;
  tree.runner.missing_program = true;
  REQUIRE(tree.compile() == 127);  // the shell's status for a missing program
  CHECK(tree.runner.captured_runs == 0);
  CHECK(tree.runner.plain_runs == 0);
  CHECK(tree.last_outcome().kind == OutcomeKind::fell_back);
  CHECK(tree.last_outcome().cause == Cause::runner_failed);
}

TEST_CASE("compile: recording fails after nvcc succeeded: not recorded, nvcc runs exactly once",
          "[compile]")
{
  Tree tree;
  Cause expected = Cause::none;
  SECTION("the output cannot be read back")
  {
    tree.runner.object.clear();  // "nvcc" wrote nothing
    expected = Cause::output_unreadable;
  }
  SECTION("the records directory cannot be written")
  {
    tree.dir.write("build/.nvfresh/records", "a file where the directory goes");
    expected = Cause::write_failed;
  }
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.captured_runs == 1);
  CHECK(tree.runner.plain_runs == 0);
  CHECK_FALSE(tree.recorded());
  CHECK(tree.last_outcome().kind == OutcomeKind::not_recorded);
  CHECK(tree.last_outcome().cause == expected);
}

TEST_CASE("compile: an input saved while nvcc runs makes the record untrusted (raced)", "[compile]")
{
  Tree tree;
  tree.runner.during_compile = [&] { tree.dir.write("src/kernel.h", "#define TILE 16\n"); };
  REQUIRE(tree.compile() == 0);
  CHECK(tree.last_outcome().kind == OutcomeKind::raced);
  CHECK(tree.last_outcome().cause == Cause::input_changed_during_compile);
  tree.runner.during_compile = nullptr;
  REQUIRE(tree.compile() == 0);  // never skipped on an untrusted record
  CHECK(tree.runner.captured_runs == 2);
  CHECK(tree.last_outcome().cause == Cause::untrusted);
}

TEST_CASE("compile: a trace that lost events is recorded untrusted (raced)", "[compile]")
{
  Tree tree;
  tree.runner.trace_lines.push_back("L 101 lost-4-events");
  REQUIRE(tree.compile() == 0);
  CHECK(tree.last_outcome().kind == OutcomeKind::raced);
  CHECK(tree.last_outcome().cause == Cause::trace_incomplete);
}

TEST_CASE("compile: what nvfresh does not handle passes through, with its cause", "[compile]")
{
  Tree tree;
  REQUIRE(run_compile({tree.nvcc, "--version"}, tree.env, tree.runner) == 0);
  CHECK(tree.runner.plain_runs == 1);
  CHECK(tree.runner.captured_runs == 0);
  CHECK(tree.last_outcome().kind == OutcomeKind::passthrough);
  CHECK(tree.last_outcome().cause == Cause::not_a_compile);
}

TEST_CASE("compile: disabled or nested runs are pure passthroughs that write nothing", "[compile]")
{
  Tree tree;
  SECTION("NVFRESH_DISABLE")
  {
    tree.env["NVFRESH_DISABLE"] = "1";
  }
  SECTION("nvfresh already runs above this compile")
  {
    tree.env["NVFRESH_ACTIVE"] = "1";
  }
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.plain_runs == 1);
  CHECK(tree.runner.captured_runs == 0);
  CHECK(tree.events().empty());
  CHECK_FALSE(std::filesystem::exists(tree.record_root));
}

TEST_CASE("compile: an unusable tracer falls back to a plain run before nvcc ran", "[compile]")
{
  Tree tree;
  SECTION("missing")
  {
    tree.env["NVFRESH_TRACE_LIB"] = tree.dir.path("no-such-tracer.so");
  }
  SECTION("not a shared library")
  {
    tree.env["NVFRESH_TRACE_LIB"] = tree.dir.write("bad.so", "x\n");
  }
  REQUIRE(tree.compile() == 0);
  CHECK(tree.runner.plain_runs == 1);
  CHECK(tree.runner.captured_runs == 0);
  CHECK(tree.last_outcome().kind == OutcomeKind::fell_back);
  CHECK(tree.last_outcome().cause == Cause::tracer_unusable);
}

TEST_CASE("compile: a ccache launcher recompiles, an sccache launcher is left out", "[compile]")
{
  Tree tree;
  auto ccache = tree.dir.write("bin/ccache", "#!/bin/sh\n");
  auto sccache = tree.dir.write("bin/sccache", "#!/bin/sh\n");
  std::vector<std::string> command = {ccache, tree.nvcc, "-c", tree.source, "-o", tree.object};
  REQUIRE(run_compile(command, tree.env, tree.runner) == 0);
  CHECK(tree.runner.last_argv == command);
  CHECK(tree.runner.last_env.at("CCACHE_RECACHE") == "1");
  command[0] = sccache;
  tree.dir.write("src/kernel.h", "#define TILE 8\n");
  REQUIRE(run_compile(command, tree.env, tree.runner) == 0);
  CHECK(tree.runner.last_argv ==
        std::vector<std::string>{tree.nvcc, "-c", tree.source, "-o", tree.object});
}
