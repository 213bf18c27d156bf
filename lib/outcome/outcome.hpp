// The one outcome model: every compile that reaches nvfresh ends in a named outcome (compiled,
// skipped, served, raced, failed, not-recorded, passthrough, fell-back) with a named cause, and the
// free text of what happened as its detail. The events log stores them and `nvfresh stats` counts
// them by kind and cause, the way ccache's Statistic counts its outcomes. A stale verdict's reason
// (`nvfresh check`) is a cause too: "why is this object stale" and "why did nvcc run" have the same
// answers.
//
// Names are stable identifiers (events.log, --json); add new causes at the end of their group and
// never rename one.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nvfresh {

enum class OutcomeKind {
  compiled,      // nvcc ran and succeeded, and the object was recorded
  skipped,       // no input changed in content: nvcc did not run
  served,        // the object came from nvfresh's cache
  raced,         // nvcc ran, but an input changed while it did: recorded untrusted
  failed,        // nvcc ran and failed: its status passed through, nothing recorded
  not_recorded,  // nvcc succeeded, but nvfresh could not record the object
  passthrough,   // not nvfresh's business (not a single-source compile, disabled, ...)
  fell_back,     // an internal problem before nvcc ran: nvcc ran plainly
};

enum class Cause {
  none,     // no cause (a command line nvfresh handles)
  unknown,  // written by an nvfresh that did not name causes

  // Why an object is stale, and so why nvcc had to run.
  no_record,            // nothing nvfresh recorded describes this object
  record_unreadable,    // its record is corrupt, truncated or of another format version
  untrusted,            // an input changed while it compiled, or its trace lost events
  inputs_unknown,       // the compile was not traced and left no depfile
  not_verified,         // the compile was not traced (another cache answered?): no proof
  object_missing,       // the object is gone
  object_modified,      // someone else wrote the object after nvfresh recorded it
  input_changed,        // a header or the source changed in content
  input_missing,        // a recorded input was deleted
  input_unstable,       // an input kept changing while nvfresh hashed it
  tool_changed,         // nvcc, cicc, ptxas, the host compiler, ... replaced
  probe_found,          // a lookup that found nothing now finds a file (shadowing, __has_include)
  env_changed,          // NVCC_APPEND_FLAGS and friends
  path_lookup_changed,  // gcc or as on PATH resolves elsewhere
  signature_changed,    // the arguments, environment or working directory changed
  compiler_changed,     // a different nvcc runs now
  output_not_captured,  // the last compile's output could not be kept for replay
  console_differs,      // the output goes to another kind of terminal now (colours)
  depfile_not_recreatable,  // the build wants a depfile the record cannot recreate
  foreign_record,           // the record describes an object outside this build tree
  step_not_cached,          // a step of nvcc (cicc, ptxas): the step cache holds none like it
  mtime_in_output,          // an input was touched, and the output holds mtimes (__TIMESTAMP__)

  // Why nvcc did not have to run.
  unchanged,          // the build tool re-ran a compile whose inputs are untouched
  touched_unchanged,  // inputs were touched, their content is unchanged
  cache_hit,          // served from nvfresh's cache
  cache_verified,     // a hit sampled for verification: compiled, and the entry matched
  cache_mismatch,     // a hit sampled for verification: compiled, and its codegen differs

  // Why a record is untrusted.
  input_changed_during_compile,  // an input's mtime/ctime is at or after the compile's start
  trace_incomplete,              // the tracer lost events

  // Why a compile failed.
  nvcc_exit_status,  // nvcc exited with a non-zero status
  nvcc_signal,       // nvcc was killed by a signal

  // Why nvcc succeeded but nothing was recorded.
  no_space,           // a file system was full
  write_failed,       // another write error (read-only file system, permissions)
  output_unreadable,  // the output cannot be read back (-o /dev/null)
  recording_error,    // anything else while recording

  // Why nvfresh passed the command through.
  disabled,                 // NVFRESH_DISABLE is set
  nested_call,              // nvfresh already runs above this compile (-ccbin or PATH led back)
  no_compiler,              // the command line names no compiler
  not_a_compile,            // --version, link, -dlink, -E, -M, ...: nothing to record
  no_source,                // a compile without a source file
  several_sources,          // several sources: nvcc compiles them one after the other
  unsupported_option,       // an option nvfresh cannot account for (-save-temps, -time, ...)
  unreadable_options_file,  // an --options-file could not be read
  bad_command_line,         // a value is missing, an option is malformed

  // Why nvfresh fell back to a plain nvcc run.
  internal_error,   // a bug or an environment problem inside nvfresh
  runner_failed,    // the compiler could not be started under nvfresh
  tracer_unusable,  // the tracer library is missing or not a shared library for this machine
};

struct Outcome {
  OutcomeKind kind = OutcomeKind::compiled;
  Cause cause = Cause::none;
  std::string detail;  // what happened, in words ("kernel_forward.h changed: 3f2a… -> 9b1c…")
};

// An error that knows its cause: the orchestrator turns it into that outcome (a FileWriteError
// or any other exception is classified where it is caught).
class OutcomeError : public std::runtime_error {
public:
  OutcomeError(Cause cause, const std::string& what) : std::runtime_error(what), m_cause(cause) {}
  Cause cause() const { return m_cause; }

private:
  Cause m_cause;
};

std::string_view outcome_name(OutcomeKind kind);  // "not-recorded"
std::optional<OutcomeKind> outcome_from_name(std::string_view name);

std::string_view cause_name(Cause cause);  // "input_changed"
std::string_view describe(Cause cause);    // "a header or the source changed in content"
std::optional<Cause> cause_from_name(std::string_view name);

}  // namespace nvfresh
