#include "compile/compile.hpp"

#include "compile/compile_plan.hpp"
#include "compile/depfile.hpp"
#include "compile/recording.hpp"
#include "compile/skip.hpp"
#include "freshness/file_hasher.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

namespace nvfresh {

namespace {

int finish(const ProcessResult& result)
{
  if (result.term_signal != 0) {
    exit_like(result);
  }
  return result.exit_code;
}

int run_plain(const std::vector<std::string>& command, const Environment& env,
              ProcessRunner& runner)
{
  return finish(runner.run(command, env));
}

void warn(const std::string& message)
{
  std::fflush(stdout);
  std::fputs(fmt::format("nvfresh: {}\n", message).c_str(), stderr);
  log::info("warning: {}", message);
}

std::optional<Depfile> read_nvcc_depfile(const CompilePlan& plan)
{
  if (plan.depfile_path.empty()) {
    return std::nullopt;
  }
  auto text = try_read_file(plan.depfile_path);
  std::string error;
  auto depfile = text ? parse_depfile(*text, &error, DepfileDialect::k_nvcc) : std::nullopt;
  if (text && !depfile) {
    log::info("cannot parse nvcc's depfile {}: {}", plan.depfile_path, error);
  }
  return depfile;
}

// Everything after nvcc succeeded. Throws on failure; the caller decides what that means.
Record record_compile(const CompileRequest& request, const CompilerChain& chain,
                      const CompilePlan& plan, CompileRun run, const CapturedOutput& captured,
                      const std::optional<Record>& previous)
{
  auto nvcc_depfile = read_nvcc_depfile(plan);
  FileHasher hasher(plan.record_root + "/hash-cache");
  Record record = make_record({request, chain, plan, run, nvcc_depfile, previous}, hasher);
  set_console(record, captured, plan.child_env);
  apply_race_guard(record);
  if (!plan.depfile_path.empty()) {
    record.depfile_prerequisites = depfile_prerequisites(record, plan, nvcc_depfile);
  }
  save_record(plan.record_file, record);
  if (!record.depfile_prerequisites.empty()) {
    write_build_depfile(plan, record.depfile_prerequisites, request.depfile.phony_targets);
  }
  log::info("recorded {} ({} inputs, {} probes, {})", plan.object, record.inputs.size(),
            record.missing.size(), record.trusted ? "trusted" : record.untrusted_reason);
  return record;
}

// Decides whether nvcc need not run and, when so, carries the skip out completely. The decision
// tells why nvcc must run otherwise.
SkipDecision skip_if_unchanged(const CompileRequest& request, const CompilerChain& chain,
                               const CompilePlan& plan, const std::optional<Record>& previous)
{
  std::int64_t check_start = coarse_now_ns();
  FileHasher hasher(plan.record_root + "/hash-cache");
  SkipDecision decision = decide_skip(previous, request, chain, plan, hasher);
  log::info("{} {}: {}", decision.skip ? "skip" : "compile", plan.object, decision.reason);
  if (decision.skip) {
    perform_skip(*previous, decision, request, plan, check_start);
  }
  return decision;
}

struct Prepared {
  CompilerChain chain;
  CompileRequest request;
  CompilePlan plan;
};

// nullopt: not nvfresh's business (the reason is logged); throws on internal failure.
std::optional<Prepared> prepare(const std::vector<std::string>& command, const Environment& env)
{
  Config config = load_config(env);
  log::set_file(config.log_file);
  if (config.disabled || env.count(k_nested_marker) != 0) {
    log::info("passthrough: {}",
              describe(config.disabled ? FallbackReason::disabled : FallbackReason::nested_call));
    return std::nullopt;
  }
  auto chain = split_compiler_chain(command);
  if (!chain) {
    log::info("passthrough: {}", describe(FallbackReason::no_compiler));
    return std::nullopt;
  }
  std::string cwd = current_directory();
  ParseResult parsed = parse_command_line(chain->args, env, cwd);
  if (!parsed.request) {
    log::info("passthrough: {} {}", describe(parsed.reason), parsed.detail);
    return std::nullopt;
  }
  CompilePlan plan = plan_compile(*parsed.request, *chain, config, env, cwd);
  return Prepared{std::move(*chain), std::move(*parsed.request), std::move(plan)};
}

int compile_and_record(const std::vector<std::string>& command, const Environment& env,
                       ProcessRunner& runner, const Prepared& prepared,
                       const std::optional<Record>& previous, const std::string& why)
{
  const CompilePlan& plan = prepared.plan;
  CompileRun run{race_guard_start_ns(), 0, why};
  CapturedOutput captured;
  ProcessResult result;
  try {
    result = runner.run_capturing(command, plan.child_env, captured);
  } catch (const std::exception& error) {
    remove_private_dir(plan);
    warn(fmt::format("{} (ran the compiler without nvfresh)", error.what()));
    return run_plain(command, env, runner);
  }
  run.end_ns = now_ns();
  std::int64_t duration = run.end_ns - run.start_ns;
  if (!result.succeeded()) {
    append_event(plan.record_root, {run.end_ns, "failed", duration, plan.object,
                                    fmt::format("nvcc exited with status {}", result.exit_code)});
  } else {
    try {
      Record record =
        record_compile(prepared.request, prepared.chain, plan, run, captured, previous);
      append_event(plan.record_root, {run.end_ns, record.history.back().event, duration,
                                      plan.object, record.history.back().reason});
    } catch (const std::exception& error) {
      remove_record(plan.record_file);
      append_event(plan.record_root,
                   {run.end_ns, "not-recorded", duration, plan.object, error.what()});
      warn(fmt::format("the object was built, but nvfresh could not record it: {}", error.what()));
    }
  }
  remove_private_dir(plan);
  return finish(result);
}

}  // namespace

int run_compile(const std::vector<std::string>& command, const Environment& env,
                ProcessRunner& runner)
{
  std::optional<Prepared> prepared;
  std::optional<Record> previous;
  SkipDecision decision;
  try {
    prepared = prepare(command, env);
    if (prepared) {
      previous = load_record(prepared->plan.record_file).record;
      decision = skip_if_unchanged(prepared->request, prepared->chain, prepared->plan, previous);
      if (decision.skip) {
        remove_private_dir(prepared->plan);
        return 0;
      }
    }
  } catch (const std::exception& error) {
    if (prepared) {
      remove_private_dir(prepared->plan);
    }
    warn(fmt::format("{} (ran the compiler without nvfresh)", error.what()));
    return run_plain(command, env, runner);
  }
  if (!prepared) {
    return run_plain(command, env, runner);
  }
  return compile_and_record(command, env, runner, *prepared, previous, decision.reason);
}

}  // namespace nvfresh
