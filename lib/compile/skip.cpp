#include "compile/skip.hpp"

#include "compile/build_depfile.hpp"
#include "compile/console_replay.hpp"
#include "freshness/freshness.hpp"
#include "freshness/input_check.hpp"
#include "record/events.hpp"
#include "record/record_root.hpp"
#include "record/signature.hpp"
#include "util/file_io.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace nvfresh {

namespace {

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

}  // namespace

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
    const bool object_only =
      std::all_of(verdict.reasons.begin(), verdict.reasons.end(), [](const StaleReason& reason) {
        return reason.kind == Cause::object_missing || reason.kind == Cause::object_modified;
      });
    return {false, {OutcomeKind::compiled, first.kind, first.describe()}, object_only};
  }
  const size_t touched = verdict.inputs_touched;
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

void save_unchanged_record(const LoadedRecord& loaded, const FileFingerprint& output,
                           std::vector<HistoryEntry> history, FileHasher& hasher)
{
  const Record& record = *loaded.record;
  auto inputs = restamped_inputs(record.inputs, hasher, now_ns());
  if (!inputs) {
    save_record_note(loaded, output, history);
    return;
  }
  Record restamped = record;
  restamped.inputs = std::move(*inputs);
  restamped.output = output;
  restamped.history = std::move(history);
  save_record(loaded.file, restamped);
}

void perform_skip(const LoadedRecord& previous, const SkipDecision& decision,
                  const CompileRequest& request, const CompilePlan& plan,
                  std::int64_t check_start_ns, FileHasher& hasher)
{
  const Record& record = *previous.record;
  if (!plan.depfile_path.empty()) {
    write_build_depfile(plan.depfile_path, plan.depfile_target, record.depfile_prerequisites,
                        request.depfile.phony_targets);
  }
  FileStat object = stat_file(plan.object);
  if (object.mtime_ns < check_start_ns - 1) {
    set_mtime_ns(plan.object, check_start_ns - 1);
    object = stat_file(plan.object);
  }
  FileFingerprint output = record.output;
  output.mtime_ns = object.mtime_ns;
  output.ctime_ns = object.ctime_ns;
  std::int64_t saved = record.end_ns - record.start_ns;
  std::vector<HistoryEntry> history = record.history;
  add_history(history,
              {now_ns(), std::string(outcome_name(OutcomeKind::skipped)), decision.why.detail});
  if (decision.why.cause == Cause::unchanged) {
    save_record_note(previous, output, history);  // no input's stamp changed: none to restamp
  } else {
    save_unchanged_record(previous, output, std::move(history), hasher);
  }
  replay_console(record);
  append_event(plan.record_root, {now_ns(), decision.why, saved, plan.object});
}

}  // namespace nvfresh
