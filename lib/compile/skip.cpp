#include "compile/skip.hpp"

#include "compile/build_depfile.hpp"
#include "freshness/freshness.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "record/signature.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace nvfresh {

namespace {

// The reasons a record cannot vouch for a skip, before any file is looked at.
std::string describe_terminals(const std::string& terminals)
{
  return terminals.empty() ? std::string("no terminal") : "a terminal (" + terminals + ")";
}

std::string describe_variables(const std::map<std::string, std::string>& variables)
{
  std::vector<std::string> parts;
  parts.reserve(variables.size());
  for (const auto& [name, value] : variables) {
    parts.push_back(fmt::format("{}={}", name, value));
  }
  return parts.empty() ? std::string("none set") : fmt::format("{}", fmt::join(parts, " "));
}

struct Doubt {
  Cause cause = Cause::none;
  std::string reason;
};

// Why the record cannot vouch for a skip, before any file is looked at ({none} when it can).
Doubt record_doubt(const Record& record, const CompileRequest& /*request*/, const CompilePlan& plan)
{
  if (!record.trusted) {
    return {Cause::untrusted, "the last compile raced with an edit: " + record.untrusted_reason};
  }
  if (!record.inputs_from_trace) {
    return {Cause::not_verified, "the last compile's inputs were not traced (only nvcc's depfile)"};
  }
  if (record.console_mode == "none") {
    return {Cause::output_not_captured,
            "the last compile's output was not captured, so it could not be replayed"};
  }
  if (std::string doubt = console_replay_doubt(record, terminal_streams(), plan.child_env);
      !doubt.empty()) {
    return {Cause::console_differs, doubt};
  }
  if (!plan.depfile_path.empty() && record.depfile_prerequisites.empty()) {
    return {Cause::depfile_not_recreatable,
            "the build wants a depfile and the last compile left none nvfresh could recreate"};
  }
  if (plan.signature != record.signature) {
    return {Cause::signature_changed,
            "the command signature changed (arguments, environment or working directory)"};
  }
  for (const auto& input : record.inputs) {
    if (input.role == InputRole::tool && input.file.path == plan.compiler_path) {
      return {};
    }
  }
  return {Cause::compiler_changed,
          fmt::format("a different nvcc ({}) runs now", plan.compiler_path)};
}

size_t touched_inputs(const Record& record, FileHasher& hasher)
{
  size_t touched = 0;
  for (const auto& input : record.inputs) {
    FileStat now = hasher.stat(input.file.path);
    touched += now.mtime_ns != input.file.mtime_ns || now.ctime_ns != input.file.ctime_ns ? 1 : 0;
  }
  return touched;
}

void replay_console(const Record& record)
{
  if (record.console_mode == "combined") {
    write_fully(STDOUT_FILENO, record.console_out);
    return;
  }
  write_fully(STDOUT_FILENO, record.console_out);
  write_fully(STDERR_FILENO, record.console_err);
}

}  // namespace

std::string console_replay_doubt(const Record& previous, const std::string& terminals_now,
                                 const Environment& env_now)
{
  if (previous.console_out.empty() && previous.console_err.empty()) {
    return {};
  }
  if (terminals_now != previous.console_terminals) {
    return fmt::format("the output went to {} then and goes to {} now: the compiler may print it "
                       "differently (colours)",
                       describe_terminals(previous.console_terminals),
                       describe_terminals(terminals_now));
  }
  if (terminals_now.empty()) {
    return {};
  }
  const auto& then_env = previous.console_terminal_env;
  const auto now_env = terminal_environment(env_now);
  if (now_env != then_env) {
    return fmt::format("the terminal's settings changed ({} then, {} now): the compiler may print "
                       "its messages differently",
                       describe_variables(then_env), describe_variables(now_env));
  }
  return {};
}

SkipDecision decide_skip(const std::optional<Record>& previous, const CompileRequest& request,
                         const CompilePlan& plan, FileHasher& hasher)
{
  if (!previous) {
    return {false, {OutcomeKind::compiled, Cause::no_record, "no record of an earlier compile"}};
  }
  if (Doubt doubt = record_doubt(*previous, request, plan); doubt.cause != Cause::none) {
    return {false, {OutcomeKind::compiled, doubt.cause, doubt.reason}};
  }
  FreshnessVerdict verdict = FreshnessChecker(hasher, plan.child_env).check(*previous);
  if (!verdict.fresh()) {
    const StaleReason& first = verdict.reasons.front();
    return {false, {OutcomeKind::compiled, first.kind, first.describe()}};
  }
  size_t touched = touched_inputs(*previous, hasher);
  if (touched == 0) {
    return {true,
            {OutcomeKind::skipped, Cause::unchanged,
             "no input changed (the build tool re-ran the compile)"}};
  }
  return {
    true,
    {OutcomeKind::skipped, Cause::touched_unchanged,
     fmt::format("{} of {} inputs touched, content unchanged", touched, previous->inputs.size())}};
}

void perform_skip(Record record, const SkipDecision& decision, const CompileRequest& request,
                  const CompilePlan& plan, std::int64_t check_start_ns)
{
  if (!plan.depfile_path.empty()) {
    write_build_depfile(plan.depfile_path, plan.depfile_target, record.depfile_prerequisites,
                        request.depfile.phony_targets);
  }
  FileStat object = stat_file(plan.object);
  if (object.mtime_ns < check_start_ns - 1) {
    set_mtime_ns(plan.object, check_start_ns - 1);
    object = stat_file(plan.object);
  }
  record.output.mtime_ns = object.mtime_ns;
  record.output.ctime_ns = object.ctime_ns;
  std::int64_t saved = record.end_ns - record.start_ns;
  add_history(record,
              {now_ns(), std::string(outcome_name(OutcomeKind::skipped)), decision.why.detail});
  save_record(plan.record_file, record);
  replay_console(record);
  append_event(plan.record_root, {now_ns(), decision.why, saved, plan.object});
}

}  // namespace nvfresh
