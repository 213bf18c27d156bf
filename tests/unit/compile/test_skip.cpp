// decide_skip over synthetic records and temporary files: it may skip only when every input is
// unchanged in content, and says why not otherwise.
#include "compile/skip.hpp"
#include "record/signature.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

const Environment k_env = {{"NVCC_APPEND_FLAGS", "-DX=1"}};

std::string write_program(const test::TempDir& dir, const std::string& relative)
{
  auto path = dir.write(relative, "#!/bin/sh\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  return path;
}

struct Fixture {
  test::TempDir dir;
  Record record;
  CompileRequest request;
  CompilePlan plan;
  CompilerChain chain;

  Fixture()
  {
    FileHasher hasher;
    auto source = dir.write("a.cu", "__global__ void k() {}\n");
    auto header = dir.write("inc/kernel_forward.h", "#define TILE 64\n");
    auto nvcc = dir.write("bin/nvcc", "nvcc v1");
    auto object = dir.write("a.o", "object bytes");
    // nvcc found gcc through PATH: probed in bin1 (nothing), found in bin2.
    auto gcc = write_program(dir, "bin2/gcc");
    std::filesystem::create_directories(dir.path("bin1"));
    request.signature_args = {"--compile", "a.cu", "--include-path=inc"};
    plan.working_dir = dir.path();
    plan.object = object;
    plan.source = source;
    plan.compiler_path = nvcc;
    plan.child_env = k_env;
    plan.child_env["PATH"] = dir.path("bin1") + ":" + dir.path("bin2");
    record.object = object;
    record.source = source;
    record.working_dir = dir.path();
    record.signature_args = request.signature_args;
    record.env = compile_environment(plan.child_env);
    record.signature = command_signature(record.signature_args, record.env, record.working_dir);
    record.inputs.push_back({*hasher.fingerprint(source).fingerprint, InputRole::source, {}});
    record.inputs.push_back({*hasher.fingerprint(header).fingerprint, InputRole::header, {}});
    record.inputs.push_back({*hasher.fingerprint(nvcc).fingerprint, InputRole::tool, {}});
    record.inputs.push_back({*hasher.fingerprint(gcc).fingerprint, InputRole::header, {}});
    record.output = *hasher.fingerprint(object).fingerprint;
    record.probes = group_probes({dir.path("inc0/kernel_forward.h"), dir.path("bin1/gcc")});
    record.console_mode = "separate";
    record.console_err = "a.cu(1): warning\n";
  }

  // As plan_compile would plan it: the signature from the request and the environment now.
  SkipDecision decide(const std::optional<Record>& previous)
  {
    plan.signature_env = compile_environment(plan.child_env);
    plan.signature =
      command_signature(request.signature_args, plan.signature_env, plan.working_dir);
    FileHasher hasher;
    return decide_skip(previous, request, plan, hasher);
  }
  SkipDecision decide() { return decide(record); }
};

void keep_mtime_write(const Fixture& f, const std::string& relative, const std::string& content)
{
  auto old = stat_file(f.dir.path(relative));
  f.dir.write(relative, content);
  set_mtime_ns(f.dir.path(relative), old.mtime_ns);
}

}  // namespace

TEST_CASE("skip: nothing changed", "[skip]")
{
  Fixture f;
  auto decision = f.decide();
  INFO(decision.why.detail);
  REQUIRE(decision.skip);
}

TEST_CASE("skip: inputs touched, content unchanged", "[skip]")
{
  Fixture f;
  auto header = f.dir.path("inc/kernel_forward.h");
  set_mtime_ns(header, stat_file(header).mtime_ns + 10'000'000'000);
  auto decision = f.decide();
  REQUIRE(decision.skip);
  REQUIRE(decision.why.detail == "1 of 4 inputs touched, content unchanged");
}

TEST_CASE("skip: a touched source whose mtime is in the output compiles", "[skip]")
{
  Fixture f;
  f.record.mtime_dependent = f.dir.path("a.cu") + " uses __TIMESTAMP__";
  REQUIRE(f.decide().skip);
  auto source = f.dir.path("a.cu");
  set_mtime_ns(source, stat_file(source).mtime_ns + 10'000'000'000);
  auto decision = f.decide();
  REQUIRE_FALSE(decision.skip);
  CHECK(decision.why.cause == Cause::mtime_in_output);
  CHECK(decision.why.detail ==
        source + " was touched, and the compile's output depends on mtimes: " + source +
          " uses __TIMESTAMP__");
}

TEST_CASE("skip: PATH changed but gcc resolves as before (a venv activated)", "[skip]")
{
  Fixture f;
  std::filesystem::create_directories(f.dir.path("venv/bin"));
  write_program(f.dir, "venv/bin/python3");
  f.plan.child_env["PATH"] =
    f.dir.path("venv/bin") + ":" + f.plan.child_env["PATH"] + ":/opt/other/bin";
  auto decision = f.decide();
  INFO(decision.why.detail);
  REQUIRE(decision.skip);
}

TEST_CASE("skip: every doubt compiles, with a reason", "[skip]")
{
  Fixture f;
  std::optional<Record> previous = f.record;
  std::string mentions;

  SECTION("no record")
  {
    previous.reset();
    mentions = "no record";
  }
  SECTION("header content replaced, mtime kept")
  {
    keep_mtime_write(f, "inc/kernel_forward.h", "#define TILE 99\n");
    mentions = "kernel_forward.h changed";
  }
  SECTION("source content replaced, mtime kept")
  {
    keep_mtime_write(f, "a.cu", "__global__ void q() {}\n");
    mentions = "a.cu changed";
  }
  SECTION("nvcc replaced in place")
  {
    keep_mtime_write(f, "bin/nvcc", "nvcc v2");
    mentions = "tool";
  }
  SECTION("a different nvcc runs")
  {
    f.plan.compiler_path = f.dir.write("other/nvcc", "nvcc v1");
    mentions = "a different nvcc";
  }
  SECTION("a new header would shadow the recorded one")
  {
    f.dir.write("inc0/kernel_forward.h", "#define TILE 1\n");
    mentions = "now exists";
  }
  SECTION("object modified by someone else")
  {
    keep_mtime_write(f, "a.o", "other bytes!");
    mentions = "was modified";
  }
  SECTION("object deleted")
  {
    std::filesystem::remove(f.dir.path("a.o"));
    mentions = "missing";
  }
  SECTION("NVCC_APPEND_FLAGS changed")
  {
    f.plan.child_env["NVCC_APPEND_FLAGS"] = "-DX=2";
    mentions = "signature";
  }
  SECTION("PATH changed: another host compiler comes first")
  {
    write_program(f.dir, "mygcc/gcc");
    f.plan.child_env["PATH"] = f.dir.path("mygcc") + ":" + f.plan.child_env["PATH"];
    mentions = "gcc on PATH is now " + f.dir.path("mygcc/gcc");
  }
  SECTION("PATH changed: the directory holding the host compiler is gone from it")
  {
    f.plan.child_env["PATH"] = f.dir.path("bin1");
    mentions = "gcc on PATH is now not found";
  }
  SECTION("arguments changed")
  {
    f.request.signature_args.push_back("--define-macro=Y");
    mentions = "signature";
  }
  SECTION("the last compile raced with an edit")
  {
    previous->trusted = false;
    previous->untrusted_reason = "kernel_forward.h changed while the object compiled";
    mentions = "raced";
  }
  SECTION("the last compile's output was not captured")
  {
    previous->console_mode = "none";
    mentions = "not captured";
  }
  SECTION("the last compile's output went to a terminal, this one's does not (or the other way)")
  {
    previous->console_terminals = terminal_streams() == "stdout,stderr" ? "" : "stdout,stderr";
    mentions = "terminal";
  }
  SECTION("inputs known only from nvcc's depfile")
  {
    previous->inputs_from_trace = false;
    mentions = "not traced";
  }
  SECTION("a depfile is wanted and none can be recreated")
  {
    f.plan.depfile_path = f.dir.path("a.o.d");
    mentions = "depfile";
  }
  SECTION("an input was deleted")
  {
    std::filesystem::remove(f.dir.path("inc/kernel_forward.h"));
    mentions = "deleted";
  }
  auto decision = f.decide(previous);
  INFO(decision.why.detail);
  REQUIRE_FALSE(decision.skip);
  REQUIRE(decision.why.detail.find(mentions) != std::string::npos);
}

TEST_CASE("skip: PATH belongs to the compile environment", "[skip]")
{
  auto env = compile_environment({{"PATH", "/a:/b"}, {"HOME", "/root"}});
  REQUIRE(env.count("PATH") == 1);
  REQUIRE(env.count("HOME") == 0);
}

TEST_CASE("skip: console_replay_doubt: what was printed, where, and how the terminal was set",
          "[skip]")
{
  Record previous;
  previous.console_mode = "separate";
  const Environment xterm = {{"TERM", "xterm-256color"}, {"HOME", "/root"}};

  SECTION("a compile that printed nothing replays the same anywhere")
  {
    previous.console_terminals = "stdout,stderr";
    previous.console_terminal_env = terminal_environment(xterm);
    CHECK(console_replay_doubt(previous, "", {}).empty());
    CHECK(console_replay_doubt(previous, "stdout", {{"TERM", "dumb"}}).empty());
  }
  previous.console_err =
    "a.cu(3): warning #177-D: variable \"v\" was declared but never referenced\n";
  SECTION("a pipe then and now")
  {
    CHECK(console_replay_doubt(previous, "", {{"TERM", "dumb"}}).empty());
  }
  SECTION("a terminal then, a pipe now")
  {
    previous.console_terminals = "stdout,stderr";
    CHECK(
      console_replay_doubt(previous, "", xterm).find("went to a terminal (stdout,stderr) then") !=
      std::string::npos);
  }
  SECTION("the same terminal settings")
  {
    previous.console_terminals = "stderr";
    previous.console_terminal_env = terminal_environment(xterm);
    CHECK(
      console_replay_doubt(previous, "stderr", {{"TERM", "xterm-256color"}, {"HOME", "/home/u"}})
        .empty());
  }
  SECTION("TERM, COLUMNS or GCC_COLORS changed")
  {
    previous.console_terminals = "stdout,stderr";
    previous.console_terminal_env = terminal_environment(xterm);
    auto doubt = console_replay_doubt(previous, "stdout,stderr", {{"TERM", "dumb"}});
    CHECK(doubt.find("TERM=xterm-256color then, TERM=dumb now") != std::string::npos);
    doubt = console_replay_doubt(previous, "stdout,stderr",
                                 {{"TERM", "xterm-256color"}, {"COLUMNS", "80"}});
    CHECK(doubt.find("COLUMNS=80 TERM=xterm-256color now") != std::string::npos);
    doubt = console_replay_doubt(previous, "stdout,stderr",
                                 {{"TERM", "xterm-256color"}, {"GCC_COLORS", ""}});
    CHECK(doubt.find("GCC_COLORS= TERM=xterm-256color now") != std::string::npos);
    doubt = console_replay_doubt(previous, "stdout,stderr", {});
    CHECK(doubt.find("none set now") != std::string::npos);
  }
}

TEST_CASE("skip: the terminal environment holds only what renders messages", "[skip]")
{
  auto env = terminal_environment({{"TERM", "xterm"},
                                   {"COLUMNS", "120"},
                                   {"NO_COLOR", "1"},
                                   {"PATH", "/usr/bin"},
                                   {"LANG", "C.UTF-8"}});
  CHECK(env == std::map<std::string, std::string>{
                 {"COLUMNS", "120"}, {"NO_COLOR", "1"}, {"TERM", "xterm"}});
}
