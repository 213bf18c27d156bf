#include "outcome/outcome.hpp"

#include "util/name_table.hpp"

namespace nvfresh {

namespace {

struct KindRow {
  OutcomeKind kind;
  std::string_view name;
};

constexpr KindRow k_kinds[] = {
  {OutcomeKind::compiled, "compiled"},       {OutcomeKind::skipped, "skipped"},
  {OutcomeKind::served, "served"},           {OutcomeKind::raced, "raced"},
  {OutcomeKind::failed, "failed"},           {OutcomeKind::not_recorded, "not-recorded"},
  {OutcomeKind::passthrough, "passthrough"}, {OutcomeKind::fell_back, "fell-back"},
};

struct CauseRow {
  Cause cause;
  std::string_view name;
  std::string_view description;
};

constexpr CauseRow k_causes[] = {
  {Cause::none, "none", "no cause (a command line nvfresh handles)"},
  {Cause::unknown, "unknown", "written by an nvfresh that did not name causes"},
  {Cause::no_record, "no_record", "nothing nvfresh recorded describes this object"},
  {Cause::record_unreadable, "record_unreadable",
   "its record is corrupt, truncated or of another format version"},
  {Cause::untrusted, "untrusted", "an input changed while it compiled, or its trace lost events"},
  {Cause::inputs_unknown, "inputs_unknown", "the compile was not traced and left no depfile"},
  {Cause::not_verified, "not_verified",
   "the compile was not traced (another cache answered?): no proof"},
  {Cause::object_missing, "object_missing", "the object is gone"},
  {Cause::object_modified, "object_modified",
   "someone else wrote the object after nvfresh recorded it"},
  {Cause::input_changed, "input_changed", "a header or the source changed in content"},
  {Cause::input_missing, "input_missing", "a recorded input was deleted"},
  {Cause::input_unstable, "input_unstable", "an input kept changing while nvfresh hashed it"},
  {Cause::tool_changed, "tool_changed", "nvcc, cicc, ptxas, the host compiler, ... replaced"},
  {Cause::probe_found, "probe_found",
   "a lookup that found nothing now finds a file (shadowing, __has_include)"},
  {Cause::env_changed, "env_changed", "NVCC_APPEND_FLAGS and friends"},
  {Cause::path_lookup_changed, "path_lookup_changed", "gcc or as on PATH resolves elsewhere"},
  {Cause::signature_changed, "signature_changed",
   "the arguments, environment or working directory changed"},
  {Cause::compiler_changed, "compiler_changed", "a different nvcc runs now"},
  {Cause::output_not_captured, "output_not_captured",
   "the last compile's output could not be kept for replay"},
  {Cause::console_differs, "console_differs",
   "the output goes to another kind of terminal now (colours)"},
  {Cause::depfile_not_recreatable, "depfile_not_recreatable",
   "the build wants a depfile the record cannot recreate"},
  {Cause::foreign_record, "foreign_record",
   "the record describes an object outside this build tree"},
  {Cause::step_not_cached, "step_not_cached",
   "the step cache holds no entry with this step's input, arguments and tool"},
  {Cause::mtime_in_output, "mtime_in_output",
   "an input was touched, and the output depends on mtimes (__TIMESTAMP__, GCC dependency)"},
  {Cause::unchanged, "unchanged", "the build tool re-ran a compile whose inputs are untouched"},
  {Cause::touched_unchanged, "touched_unchanged",
   "inputs were touched, their content is unchanged"},
  {Cause::cache_hit, "cache_hit", "served from nvfresh's cache"},
  {Cause::cache_verified, "cache_verified",
   "a cache hit sampled for verification was compiled, and matched the entry"},
  {Cause::cache_mismatch, "cache_mismatch",
   "a cache hit sampled for verification was compiled, and its codegen differs from the entry"},
  {Cause::input_changed_during_compile, "input_changed_during_compile",
   "an input's mtime/ctime is at or after the compile's start"},
  {Cause::trace_incomplete, "trace_incomplete", "the tracer lost events"},
  {Cause::nvcc_exit_status, "nvcc_exit_status", "nvcc exited with a non-zero status"},
  {Cause::nvcc_signal, "nvcc_signal", "nvcc was killed by a signal"},
  {Cause::no_space, "no_space", "a file system was full"},
  {Cause::write_failed, "write_failed", "another write error (read-only file system, permissions)"},
  {Cause::output_unreadable, "output_unreadable", "the output cannot be read back (-o /dev/null)"},
  {Cause::recording_error, "recording_error", "anything else while recording"},
  {Cause::disabled, "disabled", "NVFRESH_DISABLE is set"},
  {Cause::nested_call, "nested_call",
   "nvfresh already runs above this compile (-ccbin or PATH led back)"},
  {Cause::no_compiler, "no_compiler", "the command line names no compiler"},
  {Cause::not_a_compile, "not_a_compile",
   "--version, link, -dlink, -E, -M, ...: nothing to record"},
  {Cause::no_source, "no_source", "a compile without a source file"},
  {Cause::several_sources, "several_sources",
   "several sources: nvcc compiles them one after the other"},
  {Cause::unsupported_option, "unsupported_option",
   "an option nvfresh cannot account for (-save-temps, -time, ...)"},
  {Cause::unreadable_options_file, "unreadable_options_file",
   "an --options-file could not be read"},
  {Cause::bad_command_line, "bad_command_line", "a value is missing, an option is malformed"},
  {Cause::internal_error, "internal_error", "a bug or an environment problem inside nvfresh"},
  {Cause::runner_failed, "runner_failed", "the compiler could not be started under nvfresh"},
  {Cause::tracer_unusable, "tracer_unusable",
   "the tracer library is missing or not a shared library for this machine"},
};

}  // namespace

std::string_view outcome_name(OutcomeKind kind)
{
  const KindRow* row = find_row(k_kinds, &KindRow::kind, kind);
  return row != nullptr ? row->name : "unknown";
}

std::optional<OutcomeKind> outcome_from_name(std::string_view name)
{
  const KindRow* row = find_row(k_kinds, &KindRow::name, name);
  return row != nullptr ? std::optional<OutcomeKind>(row->kind) : std::nullopt;
}

std::string_view cause_name(Cause cause)
{
  const CauseRow* row = find_row(k_causes, &CauseRow::cause, cause);
  return row != nullptr ? row->name : "unknown";
}

std::string_view describe(Cause cause)
{
  const CauseRow* row = find_row(k_causes, &CauseRow::cause, cause);
  return row != nullptr ? row->description : "unknown";
}

std::optional<Cause> cause_from_name(std::string_view name)
{
  const CauseRow* row = find_row(k_causes, &CauseRow::name, name);
  return row != nullptr ? std::optional<Cause>(row->cause) : std::nullopt;
}

}  // namespace nvfresh
