// repro's run engine (repro/run_engine.hpp) driven through a fake ProcessRunner: each "run" of the
// command writes an artifact whose bytes the test chooses by run number, or times out, or
// interrupts repro, as a real command would.
#include "repro/repro_report.hpp"
#include "repro/run_engine.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

using namespace nvfresh;

namespace {

// One run_redirected call of a repro run (the ASLR probe's is left out).
struct RedirectedRun {
  std::size_t index = 0;  // from its directory, run-<index>
  std::vector<std::string> argv;
  std::string working_dir;
  RedirectLimits limits;
};

// What a run of the fake command does: the bytes it leaves in out.bin, or another result.
struct FakeOutcome {
  std::string artifact;
  ProcessResult result;
};

class FakeReproRunner final : public ProcessRunner {
public:
  std::function<FakeOutcome(std::size_t index)> command;

  ProcessResult run(const std::vector<std::string>&, const Environment&) override
  {
    throw std::logic_error("fake: repro runs every process redirected");
  }
  ProcessResult run_capturing(const std::vector<std::string>&, const Environment&,
                              CapturedOutput&) override
  {
    throw std::logic_error("fake: repro runs every process redirected");
  }
  ProcessResult run_redirected(const std::vector<std::string>& argv, const Environment&,
                               const std::string& stdout_path, const std::string& stderr_path,
                               const std::string& working_dir,
                               const RedirectLimits& limits) override
  {
    std::ofstream(stderr_path) << "";
    if (working_dir.empty()) {  // the ASLR probe (setarch -R cat /proc/self/personality)
      std::ofstream(stdout_path) << "0040000\n";
      return {};
    }
    const std::string run_dir = std::filesystem::path(working_dir).parent_path().filename();
    RedirectedRun call{std::stoul(run_dir.substr(run_dir.find('-') + 1)), argv, working_dir,
                       limits};
    const FakeOutcome outcome = command(call.index);
    {
      std::lock_guard lock(m_mutex);
      calls.push_back(call);
    }
    std::ofstream(stdout_path) << "";
    if (!outcome.artifact.empty()) {
      std::ofstream(working_dir + "/out.bin", std::ios::binary) << outcome.artifact;
    }
    return outcome.result;
  }

  std::vector<RedirectedRun> calls;

private:
  std::mutex m_mutex;
};

ReproPlan plan_in(const test::TempDir& dir, std::size_t runs, std::size_t jobs)
{
  ReproPlan plan;
  plan.command = {"make-artifact", "--fast"};
  plan.runs = runs;
  plan.seed = 7;
  plan.jobs = jobs;
  plan.timeout_seconds = 5;
  plan.out_dir = dir.path("out");
  return plan;
}

ReproMode command_mode()
{
  ReproMode mode;
  mode.patterns = {"*.bin"};
  return mode;
}

ReproReport report_of(const ReproRuns& done, const ReproPlan& plan)
{
  return ReproReport{plan.command,   false,
                     {"*.bin"},      {},
                     plan.seed,      plan.jobs,
                     0.95,           std::nullopt,
                     done.aslr_note, done.heap_noise_note,
                     done.warnings,  done.runs,
                     done.variants,  done.observations,
                     done.kept,      done.wall_seconds,
                     done.exit_code, done.out_dir};
}

}  // namespace

TEST_CASE("repro engine: runs every run once and groups identical artifacts into one variant",
          "[run_engine]")
{
  test::TempDir dir;
  FakeReproRunner runner;
  runner.command = [](std::size_t) { return FakeOutcome{"same bytes", {}}; };
  const ReproPlan plan = plan_in(dir, 8, 3);
  const ReproRuns done = run_repro_runs(plan, command_mode(), Environment{}, runner);

  REQUIRE(runner.calls.size() == 8);
  std::vector<bool> seen(8, false);
  for (const auto& call : runner.calls) {
    seen.at(call.index) = true;
    CHECK(call.argv.back() == "--fast");  // the command, after any setarch prefix
    CHECK(call.limits.own_process_group);
    CHECK(call.limits.timeout_seconds == 5);
  }
  CHECK(std::find(seen.begin(), seen.end(), false) == seen.end());
  CHECK(done.runs.size() == 8);
  CHECK(done.variants.size() == 1);
  CHECK(done.exit_code == 0);
  CHECK(done.interrupted_by == 0);
  CHECK(read_file(dir.path("out/variant-1/out.bin")) == "same bytes");
  CHECK_FALSE(std::filesystem::exists(dir.path("out/variant-2")));
}

TEST_CASE("repro engine: keeps each variant and a diff against the first", "[run_engine]")
{
  test::TempDir dir;
  FakeReproRunner runner;
  runner.command = [](std::size_t index) {
    return FakeOutcome{index % 3 == 2 ? "variant B\n" : "variant A\n", {}};
  };
  const ReproPlan plan = plan_in(dir, 9, 2);
  const ReproRuns done = run_repro_runs(plan, command_mode(), Environment{}, runner);

  REQUIRE(done.variants.size() == 2);
  CHECK(done.exit_code == 1);
  std::size_t in_second = 0;
  for (const auto& run : done.runs) {
    REQUIRE(run.observations.size() == 1);
    const std::size_t expected = run.index % 3 == 2 ? 1 : 0;
    CHECK(run.observations[0].variant == expected);
    in_second += expected;
  }
  CHECK(in_second == 3);
  CHECK(read_file(dir.path("out/variant-1/out.bin")) == "variant A\n");
  CHECK(read_file(dir.path("out/variant-2/out.bin")) == "variant B\n");
  CHECK(done.kept.at(1).diff == dir.path("out/variant-2.diff"));
  CHECK_THAT(read_file(done.kept.at(1).diff), Catch::Contains("=== out.bin: differs"));
}

TEST_CASE("repro engine: a run past its timeout fails the repro and says it was killed",
          "[run_engine]")
{
  test::TempDir dir;
  FakeReproRunner runner;
  runner.command = [](std::size_t index) {
    if (index == 1) {
      return FakeOutcome{{}, ProcessResult{0, SIGKILL, true}};
    }
    return FakeOutcome{"bytes", {}};
  };
  const ReproPlan plan = plan_in(dir, 4, 1);
  const ReproRuns done = run_repro_runs(plan, command_mode(), Environment{}, runner);

  CHECK(done.runs.size() == 4);
  CHECK(done.exit_code == 2);
  CHECK(done.runs[1].failed());
  CHECK_THAT(done.runs[1].error, Catch::Contains("timed out after 5 s (--timeout); killed"));
  CHECK(done.runs[1].observations.empty());
  CHECK(done.variants.size() == 1);  // the other three
  CHECK(std::filesystem::exists(dir.path("out/run-1.stderr")));
}

TEST_CASE("repro engine: interrupted, it stops the run under way, starts no more, reports the "
          "finished ones",
          "[run_engine]")
{
  test::TempDir dir;
  FakeReproRunner runner;
  runner.command = [](std::size_t index) {
    if (index == 2) {
      interrupt_repro(SIGINT);  // what the SIGINT handler does; the run is killed with its group
      return FakeOutcome{{}, ProcessResult{0, SIGKILL, false}};
    }
    return FakeOutcome{"bytes", {}};
  };
  const ReproPlan plan = plan_in(dir, 6, 1);
  const ReproRuns done = run_repro_runs(plan, command_mode(), Environment{}, runner);

  CHECK(runner.calls.size() == 3);  // runs 3 to 5 never started
  REQUIRE(done.runs.size() == 3);
  CHECK(done.interrupted_by == SIGINT);
  CHECK(done.exit_code == 128 + SIGINT);
  CHECK_FALSE(done.runs[0].failed());
  CHECK_FALSE(done.runs[1].failed());
  CHECK(done.runs[2].error == "interrupted: repro was stopped while it ran");
  REQUIRE_FALSE(done.warnings.empty());
  CHECK_THAT(done.warnings.back(),
             Catch::Contains("interrupted by SIGINT after starting 3 of 6 runs"));
  CHECK(done.variants.size() == 1);

  const std::string report = format_repro_report(report_of(done, plan));
  CHECK_THAT(report, Catch::Contains("interrupted by SIGINT after starting 3 of 6 runs"));
  CHECK_THAT(report, Catch::Contains("interrupted: the runs that finished are above"));
  CHECK_THAT(report, Catch::Contains("(exit 130)"));

  SECTION("a repro after it runs as before")
  {
    test::TempDir again;
    runner.calls.clear();
    runner.command = [](std::size_t) { return FakeOutcome{"bytes", {}}; };
    const ReproRuns next =
      run_repro_runs(plan_in(again, 2, 1), command_mode(), Environment{}, runner);
    CHECK(next.interrupted_by == 0);
    CHECK(next.runs.size() == 2);
    CHECK(next.exit_code == 0);
  }
}
