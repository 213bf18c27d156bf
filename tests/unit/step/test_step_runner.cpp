#include "step/step_runner.hpp"

#include "cache/cache_storage.hpp"
#include "util/file_io.hpp"

#include "../fakes.hpp"
#include "../temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

// A step, a store and the runner's seams, all in a temporary directory: no socket and no trace
// file (the trace goes nowhere), no steps log.
struct Bench {
  test::TempDir dir;
  Step step;
  Environment env;
  StepReport report{env};
  TraceSink sink{env};
  CacheStorage storage{settings()};
  FileHasher hasher;
  KeyedInputs inputs;
  test::FakeProcessRunner runner;
  std::string output = dir.path("k.ptx");

  Bench()
  {
    step.tool = dir.path("cicc");
    step.tool_exe = step.tool;
    step.argv = {"cicc", "-arch", "compute_80", dir.path("tmpxft_0000abcd_00000000-7_k.cpp1.ii")};
    step.temp = find_temp_names(step.argv);
    step.cwd = dir.path();
    step.pass = "compute_80";
  }
  CacheSettings settings() const
  {
    CacheSettings settings;
    settings.dir = dir.path("cache");
    settings.max_bytes = 1ULL << 30;
    return settings;
  }
  StepEnding carry(const StepPlan& plan)
  {
    return carry_out(plan, {step, env, report, sink, &storage, &hasher, &inputs}, runner);
  }
  StepEntry entry(std::string content) const
  {
    StepEntry entry;
    entry.key = hash_bytes("a step");
    entry.tool = step.tool_exe;
    entry.pass = step.pass;
    entry.outputs.push_back({output, std::move(content)});
    return entry;
  }
};

const Digest k_key = hash_bytes("a step");

StepPlan miss()
{
  StepLookup lookup;
  lookup.why_missed = "no entry";
  return plan_step(k_key, lookup, KeyedInputs{}, {});
}

}  // namespace

TEST_CASE("step_runner: a hit is served, the tool never runs", "[step]")
{
  Bench bench;
  StepLookup lookup;
  lookup.local = bench.entry("served ptx");
  lookup.local_holds = true;
  const StepPlan plan = plan_step(k_key, lookup, bench.inputs, {});
  REQUIRE(plan.action == StepPlan::Action::serve);
  const StepEnding ending = bench.carry(plan);
  CHECK(ending.kind == StepEnding::Kind::exit_served);
  CHECK(bench.runner.program_runs == 0);
  CHECK(try_read_file(bench.output) == "served ptx");
}

TEST_CASE("step_runner: a hit whose trace cannot be sent runs the tool plainly", "[step]")
{
  Bench bench;
  bench.env[k_trace_file_variable] = bench.dir.path("no/such/dir/trace");
  const TraceSink sink(bench.env);
  StepLookup lookup;
  lookup.local = bench.entry("served ptx");
  lookup.local_holds = true;
  const StepPlan plan = plan_step(k_key, lookup, bench.inputs, {});
  const StepEnding ending = carry_out(
    plan, {bench.step, bench.env, bench.report, sink, &bench.storage, &bench.hasher, &bench.inputs},
    bench.runner);
  CHECK(ending.kind == StepEnding::Kind::exec_tool);
  CHECK_FALSE(try_read_file(bench.output));  // nothing written: the real tool writes it
}

TEST_CASE("step_runner: a hit or a miss without the cache's storage execs the tool", "[step]")
{
  Bench bench;
  StepLookup lookup;
  lookup.local = bench.entry("served ptx");
  lookup.local_holds = true;
  for (const StepPlan& plan : {plan_step(k_key, lookup, bench.inputs, {}), miss()}) {
    const StepEnding ending = carry_out(
      plan,
      {bench.step, bench.env, bench.report, bench.sink, nullptr, &bench.hasher, &bench.inputs},
      bench.runner);
    CHECK(ending.kind == StepEnding::Kind::exec_tool);
    CHECK(bench.runner.program_runs == 0);  // exec'd by end_step, not run here
  }
  CHECK_FALSE(try_read_file(bench.output));
}

TEST_CASE("step_runner: a miss runs the tool and stores its run", "[step]")
{
  Bench bench;
  bench.runner.object = bench.output;
  bench.runner.object_bytes = "run ptx";
  bench.runner.trace_lines = {"W 4242 " + bench.output};
  const StepEnding ending = bench.carry(miss());
  CHECK(ending.kind == StepEnding::Kind::exit_as_run);
  CHECK(ending.result.succeeded());
  CHECK(bench.runner.program_runs == 1);
  CHECK(bench.runner.last_program == bench.step.tool);
  CHECK(bench.runner.last_argv == bench.step.argv);
  CHECK(bench.runner.last_env.contains(k_trace_socket_variable));
  const auto stored = bench.storage.local().read_step(k_key);
  REQUIRE(stored);
  REQUIRE(stored->outputs.size() == 1);
  CHECK(stored->outputs[0] == StepOutput{bench.output, "run ptx"});
}

TEST_CASE("step_runner: a run that fails ends as it ended, and nothing is stored", "[step]")
{
  Bench bench;
  bench.runner.object = bench.output;
  bench.runner.trace_lines = {"W 4242 " + bench.output};
  bench.runner.exit_code = 2;
  const StepEnding ending = bench.carry(miss());
  CHECK(ending.kind == StepEnding::Kind::exit_as_run);
  CHECK(ending.result.exit_code == 2);
  CHECK_FALSE(bench.storage.local().read_step(k_key));
}

TEST_CASE("step_runner: a run whose trace names no output is not stored", "[step]")
{
  Bench bench;
  bench.runner.object = bench.output;
  const StepEnding ending = bench.carry(miss());
  CHECK(ending.kind == StepEnding::Kind::exit_as_run);
  CHECK(ending.result.succeeded());
  CHECK_FALSE(bench.storage.local().read_step(k_key));
}

TEST_CASE("step_runner: a hit sampled for verification runs and keeps the entry", "[step]")
{
  Bench bench;
  bench.runner.object = bench.output;
  bench.runner.object_bytes = "run ptx";
  bench.runner.trace_lines = {"W 4242 " + bench.output};
  StepLookup lookup;
  lookup.local = bench.entry("stored ptx");
  lookup.local_holds = true;
  const StepPlan plan = plan_step(k_key, lookup, bench.inputs, {1.0, 0.0});
  REQUIRE(plan.action == StepPlan::Action::run_and_verify);
  CHECK(bench.carry(plan).kind == StepEnding::Kind::exit_as_run);
  CHECK(bench.runner.program_runs == 1);
  // A mismatch: the run is stored over the entry.
  const auto stored = bench.storage.local().read_step(k_key);
  REQUIRE(stored);
  CHECK(stored->outputs[0].content == "run ptx");
}

TEST_CASE("step_runner: a plain plan, or a tool that cannot start, execs the tool", "[step]")
{
  Bench bench;
  CHECK(bench.carry(plan_plainly(PlainReason::no_key)).kind == StepEnding::Kind::exec_tool);
  CHECK(bench.runner.program_runs == 0);
  bench.runner.missing_program = true;
  CHECK(bench.carry(miss()).kind == StepEnding::Kind::exec_tool);
}
