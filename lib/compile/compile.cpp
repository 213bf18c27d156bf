#include "compile/compile.hpp"

#include "compile/cache_phase.hpp"
#include "compile/compile_plan.hpp"
#include "compile/compiler_caches.hpp"
#include "compile/recording.hpp"
#include "compile/skip.hpp"
#include "config/config.hpp"
#include "freshness/file_hasher.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"
#include "outcome/outcome.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "space/activity.hpp"
#include "space/full_disk.hpp"
#include "step/step_runner.hpp"
#include "trace/trace_channel.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <variant>

namespace nvfresh {

namespace {

int finish(const ProcessResult& result)
{
  if (result.term_signal != 0) {
    exit_like(result);
  }
  return result.exit_code;
}

void warn(const std::string& message)
{
  std::fflush(stdout);
  std::fputs(fmt::format("nvfresh: {}\n", message).c_str(), stderr);
  log::info("warning: {}", message);
}

// The compiler run as if nvfresh were not there. A compiler that cannot be started at all gets one
// line and the status a shell gives (127 not found, 126 not executable).
int run_plain(const std::vector<std::string>& command, const Environment& env,
              ProcessRunner& runner)
{
  try {
    return finish(runner.run(command, env));
  } catch (const SpawnError& error) {
    warn(error.what());
    return error.shell_status();
  }
}

// Where the outcome of a command goes: the record root of the build tree it runs in, if it has
// one (a command nvfresh passes through never makes a new .nvfresh directory).
void log_outcome(const std::optional<std::string>& record_root, const Outcome& outcome,
                 const std::string& object, std::int64_t duration_ns)
{
  log::info("{} {}: {} ({})", outcome_name(outcome.kind), object.empty() ? "-" : object,
            outcome.detail, cause_name(outcome.cause));
  if (record_root) {
    append_event(*record_root, {now_ns(), outcome, duration_ns, object});
  }
}

// What an exception thrown while recording says about its cause.
Cause cause_of(const std::exception& error)
{
  if (const auto* named = dynamic_cast<const OutcomeError*>(&error)) {
    return named->cause();
  }
  if (const auto* write = dynamic_cast<const FileWriteError*>(&error)) {
    return write->disk_full() ? Cause::no_space : Cause::write_failed;
  }
  if (const auto* fs_error = dynamic_cast<const std::filesystem::filesystem_error*>(&error)) {
    const int code = fs_error->code().value();
    return code == ENOSPC || code == EDQUOT ? Cause::no_space : Cause::write_failed;
  }
  return Cause::recording_error;
}

Outcome failed_outcome(const ProcessResult& result)
{
  if (result.term_signal != 0) {
    return {OutcomeKind::failed, Cause::nvcc_signal,
            fmt::format("nvcc was killed by signal {}", result.term_signal)};
  }
  return {OutcomeKind::failed, Cause::nvcc_exit_status,
          fmt::format("nvcc exited with status {}", result.exit_code)};
}

struct Prepared {
  Config config;
  CompilerChain chain;
  CompileRequest request;
  CompilePlan plan;
};

// What nvfresh does not handle: a passthrough with its cause.
struct NotHandled {
  Config config;
  Outcome outcome;
};

// Parse and plan; a NotHandled when the command is not nvfresh's business. Throws on an internal
// failure (the caller falls back to a plain run).
std::variant<Prepared, NotHandled> prepare(const std::vector<std::string>& command,
                                           const Environment& env)
{
  Config config = load_config(env);
  log::set_file(config.log_file);
  if (config.disabled || env.count(k_nested_marker) != 0) {
    Cause cause = config.disabled ? Cause::disabled : Cause::nested_call;
    return NotHandled{config, {OutcomeKind::passthrough, cause, std::string(describe(cause))}};
  }
  auto chain = split_compiler_chain(command);
  if (!chain) {
    return NotHandled{
      config, {OutcomeKind::passthrough, Cause::no_compiler, "no word of the command names nvcc"}};
  }
  std::string cwd = current_directory();
  ParseResult parsed = parse_command_line(chain->args, env, cwd);
  if (!parsed.request) {
    return NotHandled{config,
                      {OutcomeKind::passthrough, parsed.reason,
                       fmt::format("{}{}{}", describe(parsed.reason),
                                   parsed.detail.empty() ? "" : ": ", parsed.detail)}};
  }
  CompilePlan plan = plan_compile(*parsed.request, *chain, config, env, cwd);
  return Prepared{config, std::move(*chain), std::move(*parsed.request), std::move(plan)};
}

// The record of a compile is the unchanged path's first work, and all of it waits for the record:
// a CUTLASS TU's is parsed in pieces on this many threads (5.7 M instructions on one).
constexpr size_t k_record_parse_threads = 4;

// The unchanged path's own stats and hashes, shared by the skip and the cache lookup after it: every
// one of them is made after `start_ns` (CLOCK_REALTIME_COARSE, read before the first), which the
// race guard of a served object compares file times with.
struct InputCheck {
  std::int64_t start_ns;
  FileHasher hasher;
};

// Decides whether nvcc need not run and, when so, carries the skip out completely.
SkipDecision skip_if_unchanged(const Prepared& prepared, const LoadedRecord& loaded,
                               InputCheck& check)
{
  const std::optional<Record>& previous = loaded.record;
  FileHasher& hasher = check.hasher;
  const std::int64_t check_start = check.start_ns;
  SkipDecision decision = decide_skip(previous, prepared.request, prepared.plan, hasher);
  if (decision.skip) {
    perform_skip(loaded, decision, prepared.request, prepared.plan, check_start, hasher);
  }
  return decision;
}

ServeRequest serve_request(const Prepared& prepared, const std::optional<Record>& previous,
                           std::int64_t start_ns)
{
  return {prepared.request, prepared.chain, prepared.plan, previous, start_ns};
}

// nvcc and its arguments, without the launchers before it: how the cache can compile it again.
std::vector<std::string> compiler_command(const CompilerChain& chain)
{
  std::vector<std::string> command{chain.compiler};
  command.insert(command.end(), chain.args.begin(), chain.args.end());
  return command;
}

// The object from nvfresh's cache, when an entry stands in for this compile (true); its outcome
// logged.
bool serve_from_cache(CachePhase& cache, const Prepared& prepared,
                      const std::optional<Record>& previous, InputCheck& check)
{
  if (!cache.enabled()) {
    return false;
  }
  const std::int64_t start_ns = check.start_ns;
  FileHasher& hasher = check.hasher;
  if (previous && previous->trusted) {
    std::vector<FileFingerprint> known;
    known.reserve(previous->inputs.size());
    for (const auto& input : previous->inputs) {
      known.push_back(input.file);
    }
    hasher.seed(known);
  }
  auto served = cache.serve(serve_request(prepared, previous, start_ns), hasher);
  if (served) {
    log_outcome(prepared.plan.record_root, served->outcome, prepared.plan.object, served->saved_ns);
  }
  return served.has_value();
}

// The object its record names, from the entry the record names, when nothing else changed (true);
// its outcome logged.
bool restore_from_cache(CachePhase& cache, const Prepared& prepared, const LoadedRecord& loaded,
                        InputCheck& check)
{
  auto restored =
    cache.restore(loaded, serve_request(prepared, loaded.record, check.start_ns), check.hasher);
  if (restored) {
    log_outcome(prepared.plan.record_root, restored->outcome, prepared.plan.object,
                restored->saved_ns);
  }
  return restored.has_value();
}

// After nvcc succeeded: the record, or "not recorded" with its cause. Never throws.
Outcome record_or_report(const Prepared& prepared, const CompileRun& run, const std::string& trace,
                         const CapturedOutput& captured, const std::optional<Record>& previous,
                         Record* recorded)
{
  try {
    return record_compile(
      {prepared.request, prepared.chain, prepared.plan, run, trace, captured, previous}, recorded);
  } catch (const std::exception& error) {
    remove_record(prepared.plan.record_file);
    warn(fmt::format("the object was built, but nvfresh could not record it: {}", error.what()));
    return {OutcomeKind::not_recorded, cause_of(error), error.what()};
  }
}

int compile_and_record(const std::vector<std::string>& command, const Environment& env,
                       ProcessRunner& runner, const Prepared& prepared,
                       const std::optional<Record>& previous, const Outcome& why, CachePhase& cache)
{
  const CompilePlan& plan = prepared.plan;
  ChainedRun chained = prepare_chained_caches(prepared.chain, plan.child_env);
  CompileRun run{race_guard_start_ns(), 0, why};
  CapturedOutput captured;
  ProcessResult result;
  std::string trace;
  try {
    TraceListener listener;
    chained.env[k_trace_socket_variable] = listener.address();
    if (cache.verifying()) {  // a verifying recompile compares fresh codegen: no served step
      chained.env.erase(k_step_runner_variable);
    }
    result = runner.run_capturing(chained.command, chained.env, captured);
    trace = listener.finish();
  } catch (const SpawnError& error) {
    // Plain nvcc could not start either: the shell's line and status, once.
    warn(error.what());
    log_outcome(plan.record_root, {OutcomeKind::fell_back, Cause::runner_failed, error.what()},
                plan.object, 0);
    return error.shell_status();
  } catch (const std::exception& error) {
    warn(fmt::format("{} (ran the compiler without nvfresh)", error.what()));
    log_outcome(plan.record_root, {OutcomeKind::fell_back, Cause::runner_failed, error.what()},
                plan.object, 0);
    return run_plain(command, env, runner);
  }
  run.end_ns = now_ns();
  if (!result.succeeded()) {
    warn_if_failed_for_space({plan.object, plan.depfile_path, plan.record_root, plan.child_env});
  }
  Record recorded;
  Outcome outcome = result.succeeded()
                      ? record_or_report(prepared, run, trace, captured, previous, &recorded)
                      : failed_outcome(result);
  if (outcome.kind == OutcomeKind::compiled) {
    outcome = cache.after_compile(serve_request(prepared, previous, run.start_ns), recorded,
                                  std::move(outcome), compiler_command(prepared.chain));
  }
  log_outcome(plan.record_root, outcome, plan.object, run.end_ns - run.start_ns);
  return finish(result);
}

}  // namespace

int run_compile(const std::vector<std::string>& command, const Environment& env,
                ProcessRunner& runner, AfterUnchangedPath after)
{
  auto unchanged_path_done = [after] {
    if (after == AfterUnchangedPath::exit_process) {
      exit_like(ProcessResult{});
    }
    return 0;
  };
  std::optional<Prepared> prepared;
  std::optional<Record> previous;
  SkipDecision decision;
  std::optional<CachePhase> cache;
  try {
    auto planned = prepare(command, env);
    if (auto* not_handled = std::get_if<NotHandled>(&planned)) {
      if (not_handled->outcome.cause != Cause::disabled &&
          not_handled->outcome.cause != Cause::nested_call) {
        log_outcome(existing_record_root(not_handled->config.record_dir, current_directory()),
                    not_handled->outcome, "", 0);
      }
      return run_plain(command, env, runner);
    }
    prepared = std::move(std::get<Prepared>(planned));
    enter_build_tree(prepared->plan.record_root, prepared->plan.working_dir, env);
    LoadedRecord loaded =
      load_record(prepared->plan.record_file, /*keep_stored=*/true, k_record_parse_threads);
    InputCheck check{coarse_now_ns(),
                     FileHasher(prepared->plan.hash_cache, FileHasher::k_default_settle_ns,
                                prepared->plan.shared_hash_cache)};
    decision = skip_if_unchanged(*prepared, loaded, check);
    if (decision.skip) {
      log::info("skip {}: {}", prepared->plan.object, decision.why.detail);
      return unchanged_path_done();
    }
    cache.emplace(prepared->config, env);
    if (decision.object_only && restore_from_cache(*cache, *prepared, loaded, check)) {
      return unchanged_path_done();
    }
    previous = std::move(loaded.record);
    if (serve_from_cache(*cache, *prepared, previous, check)) {
      return unchanged_path_done();
    }
  } catch (const std::exception& error) {
    warn(fmt::format("{} (ran the compiler without nvfresh)", error.what()));
    Cause cause = dynamic_cast<const OutcomeError*>(&error) != nullptr
                    ? dynamic_cast<const OutcomeError&>(error).cause()
                    : Cause::internal_error;
    std::optional<std::string> root =
      prepared ? std::optional<std::string>(prepared->plan.record_root)
               : existing_record_root(load_config(env).record_dir, current_directory());
    log_outcome(root, {OutcomeKind::fell_back, cause, error.what()},
                prepared ? prepared->plan.object : std::string(), 0);
    return run_plain(command, env, runner);
  }
  return compile_and_record(command, env, runner, *prepared, previous, decision.why, *cache);
}

}  // namespace nvfresh
