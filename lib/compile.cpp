#include "compile.hpp"

#include "command_line.hpp"
#include "compile_plan.hpp"
#include "compiler_chain.hpp"
#include "depfile.hpp"
#include "file_hasher.hpp"
#include "record_store.hpp"
#include "recorder.hpp"
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
void record_compile(const CompileRequest& request, const CompilerChain& chain,
                    const CompilePlan& plan, CompileRun run)
{
  auto nvcc_depfile = read_nvcc_depfile(plan);
  auto previous = load_record(plan.record_file).record;
  FileHasher hasher(plan.record_root + "/hash-cache");
  Record record = make_record({request, chain, plan, run, nvcc_depfile, previous}, hasher);
  apply_race_guard(record);
  save_record(plan.record_file, record);
  if (!plan.depfile_path.empty()) {
    write_build_depfile(record, plan, nvcc_depfile, request.depfile.phony_targets);
  }
  log::info("recorded {} ({} inputs, {} probes, {})", plan.object, record.inputs.size(),
            record.missing.size(), record.trusted ? "trusted" : record.untrusted_reason);
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
    log::info("passthrough: {}", describe(config.disabled ? FallbackReason::disabled
                                                          : FallbackReason::nested_call));
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
  CompilePlan plan = plan_compile(*parsed.request, config, env, cwd);
  return Prepared{std::move(*chain), std::move(*parsed.request), std::move(plan)};
}

} // namespace

int run_compile(const std::vector<std::string>& command, const Environment& env,
                ProcessRunner& runner)
{
  std::optional<Prepared> prepared;
  try {
    prepared = prepare(command, env);
  } catch (const std::exception& error) {
    warn(fmt::format("{} (ran the compiler without nvfresh)", error.what()));
    return run_plain(command, env, runner);
  }
  if (!prepared) {
    return run_plain(command, env, runner);
  }
  CompileRun run{coarse_now_ns(), 0};
  ProcessResult result;
  try {
    result = runner.run(command, prepared->plan.child_env);
  } catch (const std::exception& error) {
    remove_private_dir(prepared->plan);
    warn(fmt::format("{} (ran the compiler without nvfresh)", error.what()));
    return run_plain(command, env, runner);
  }
  run.end_ns = now_ns();
  if (result.succeeded()) {
    try {
      record_compile(prepared->request, prepared->chain, prepared->plan, run);
    } catch (const std::exception& error) {
      remove_record(prepared->plan.record_file);
      warn(fmt::format("the object was built, but nvfresh could not record it: {}", error.what()));
    }
  }
  remove_private_dir(prepared->plan);
  return finish(result);
}

} // namespace nvfresh
