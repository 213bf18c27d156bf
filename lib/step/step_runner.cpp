#include "step/step_runner.hpp"

#include "cache/cache_storage.hpp"
#include "step/step_lookup.hpp"
#include "step/step_store.hpp"
#include "trace/trace_channel.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <unistd.h>

namespace nvfresh {

namespace {

// The environment the tool gets: the runner's, with LD_PRELOAD as the tracer found it.
Environment tool_environment(const Environment& runner_env)
{
  Environment env = runner_env;
  if (auto preload = env.find(k_step_preload_variable); preload != env.end()) {
    env["LD_PRELOAD"] = preload->second;
    env.erase(k_step_preload_variable);
  }
  return env;
}

Step step_of(const std::vector<std::string>& args)
{
  Step step;
  step.started_ns = monotonic_now_ns();
  step.tool = args[0];
  step.argv.assign(args.begin() + 1, args.end());
  step.pass = pass_of(step.argv);
  return step;
}

// Only the reasons the runner ever logged are logged (the others said nothing).
bool logs_plain_run(PlainReason reason)
{
  return reason == PlainReason::cache_off || reason == PlainReason::refused ||
         reason == PlainReason::not_a_step_tool || reason == PlainReason::setup_failed;
}

StepEnding run_plainly(const StepPlan& plan, const StepContext& context)
{
  if (logs_plain_run(plan.plain_reason)) {
    log::info("step {} runs plainly: {}", context.step.tool, plan.note);
  }
  if (plan.outcome) {
    context.report.add(context.step, *plan.outcome, 0);
  }
  return {StepEnding::Kind::exec_tool, {}};
}

StepEnding serve(const StepPlan& plan, const StepContext& context)
{
  const Step& step = context.step;
  const StepEntry& entry = *plan.entry;
  context.storage->local().count(
    plan.key, {{CacheCounter::step_hits, 1}, {CacheCounter::step_saved_ns, entry.run_ns}});
  context.storage->local().touch_step(plan.key);
  log::info("step {} {} served ({})", step.pass, tool_name(step), plan.note);
  context.report.add(step, *plan.outcome, entry.run_ns);
  std::vector<std::pair<std::string, std::string>> outputs;
  std::vector<std::string> written;
  for (const auto& output : entry.outputs) {
    outputs.emplace_back(restore_temp_names(output.path, step.temp),
                         restore_temp_names(output.content, step.temp));
    written.push_back(outputs.back().first);
  }
  if (!context.sink.send(served_lines(step, entry, written, monotonic_now_ns()))) {
    return {StepEnding::Kind::exec_tool, {}};  // the record would miss what it read: run it
  }
  for (const auto& [path, content] : outputs) {
    write_file_atomically(path, content);
  }
  write_fully(STDOUT_FILENO, restore_temp_names(entry.out, step.temp));
  write_fully(STDERR_FILENO, restore_temp_names(entry.err, step.temp));
  return {StepEnding::Kind::exit_served, {}};
}

std::string temp_capture(const std::string& stem, const char* which)
{
  const char* tmp = std::getenv("TMPDIR");
  return fmt::format("{}/nvfresh-step-{}-{}-{}", tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp",
                     ::getpid(), stem, which);
}

// The tool run as a child under a trace channel of the runner's, its output captured.
ToolRun run_tool(const Step& step, const Environment& env, ProcessRunner& runner)
{
  TraceListener listener;
  Environment child_env = env;
  child_env.erase(k_step_runner_variable);
  child_env.erase(std::string(k_trace_file_variable));
  child_env[k_trace_socket_variable] = listener.address();
  const std::string out_path = temp_capture(step.temp.stem, "out");
  const std::string err_path = temp_capture(step.temp.stem, "err");
  ToolRun run;
  run.started_ns = coarse_now_ns();
  const auto started = std::chrono::steady_clock::now();
  run.result = runner.run_program_as(step.tool, step.argv, child_env, out_path, err_path);
  run.run_ns =
    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started)
      .count();
  run.trace = listener.finish();
  run.out = try_read_file(out_path).value_or("");
  run.err = try_read_file(err_path).value_or("");
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return run;
}

Outcome failed_outcome(const Step& step, const ProcessResult& result)
{
  return {OutcomeKind::failed,
          result.term_signal != 0 ? Cause::nvcc_signal : Cause::nvcc_exit_status,
          fmt::format("{} exited with status {}", tool_name(step), result.exit_code)};
}

// The run of the remote executor, passed on as the tool's would be: the trace says what it read
// and wrote (as a served step's, no tool ran here), its outputs are in place, its console printed,
// its entry stored. False (nothing sent, printed or stored) when the trace cannot be sent.
bool pass_on_remote_run(const StepPlan& plan, const StepContext& context, const ToolRun& run)
{
  const Step& step = context.step;
  StepEntry shape;
  for (const auto& path : run.accesses->reads) {
    shape.reads.push_back({path, {}});
  }
  if (!context.sink.send(served_lines(step, shape, run.accesses->written, monotonic_now_ns()))) {
    return false;
  }
  write_fully(STDOUT_FILENO, run.out);
  write_fully(STDERR_FILENO, run.err);
  Outcome outcome = *plan.outcome;
  outcome.detail += " (run on the remote executor)";
  context.report.add(step, outcome, run.run_ns);
  keep_run(plan, step, run, *context.inputs, *context.storage, *context.hasher, context.report);
  return true;
}

StepEnding run_and_keep(const StepPlan& plan, const StepContext& context, ProcessRunner& runner)
{
  const Step& step = context.step;
  log::info("step {} {} runs: {}", step.pass, tool_name(step), plan.note);
  context.storage->local().count(plan.key, CacheCounter::step_misses);
  if (plan.action == StepPlan::Action::run_and_store && context.executor != nullptr &&
      executor_usable(*context.executor)) {
    auto remote = run_remotely(step, *context.inputs, *context.executor);
    if (remote && pass_on_remote_run(plan, context, *remote)) {
      return {StepEnding::Kind::exit_as_run, remote->result};
    }
  }
  const ToolRun run = run_tool(step, context.env, runner);
  forward_trace(context.sink, step, run.trace);
  write_fully(STDOUT_FILENO, run.out);
  write_fully(STDERR_FILENO, run.err);
  if (!run.result.succeeded()) {
    context.report.add(step, failed_outcome(step, run.result), run.run_ns);
    return {StepEnding::Kind::exit_as_run, run.result};
  }
  if (plan.action == StepPlan::Action::run_and_store) {
    context.report.add(step, *plan.outcome, run.run_ns);
  }
  keep_run(plan, step, run, *context.inputs, *context.storage, *context.hasher, context.report);
  return {StepEnding::Kind::exit_as_run, run.result};
}

}  // namespace

StepEnding carry_out(const StepPlan& plan, const StepContext& context, ProcessRunner& runner)
{
  if (plan.action != StepPlan::Action::run_plainly &&
      (context.storage == nullptr || context.hasher == nullptr || context.inputs == nullptr)) {
    // gather_and_plan gives a plan that serves or stores only with the storage it needs; a
    // caller that breaks this gets the tool run plainly, never a null dereference
    log::info("step {} runs plainly: its plan came without the step cache's storage",
              context.step.tool);
    return {StepEnding::Kind::exec_tool, {}};
  }
  try {
    switch (plan.action) {
    case StepPlan::Action::run_plainly: return run_plainly(plan, context);
    case StepPlan::Action::serve: return serve(plan, context);
    case StepPlan::Action::run_and_store:
    case StepPlan::Action::run_and_verify: return run_and_keep(plan, context, runner);
    }
  } catch (const std::exception& error) {  // thrown only before the tool started
    log::info("step {} runs plainly: {}", context.step.tool, error.what());
  }
  return {StepEnding::Kind::exec_tool, {}};
}

void end_step(const StepEnding& ending, const Step& step, const Environment& env)
{
  switch (ending.kind) {
  case StepEnding::Kind::exit_served: std::_Exit(0);
  case StepEnding::Kind::exit_as_run: exit_like(ending.result);
  case StepEnding::Kind::exec_tool: break;
  }
  const int error = replace_process_as(step.tool, step.argv, env);
  std::_Exit(error == ENOENT ? 127 : 126);
}

int run_step(const std::vector<std::string>& args, const Environment& runner_env)
{
  const Environment env = tool_environment(runner_env);
  if (args.size() < 2) {
    std::fputs("nvfresh: __step is nvfresh's own (the step cache's runner)\n", stderr);
    return 2;
  }
  Step step = step_of(args);
  const StepReport report(env);
  StepWorld world;
  const StepPlan plan = gather_and_plan(&step, env, &world);
  const TraceSink sink(env);
  const StepContext context{step,
                            env,
                            report,
                            sink,
                            world.storage ? &*world.storage : nullptr,
                            world.hasher ? &*world.hasher : nullptr,
                            &world.inputs,
                            world.executor ? &*world.executor : nullptr};
  SystemProcessRunner runner;
  end_step(carry_out(plan, context, runner), step, env);
}

}  // namespace nvfresh
