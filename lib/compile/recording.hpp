// After nvcc succeeded: turn what the compile read (the trace, nvcc's depfile, the command line)
// into the object's record, save it, and write the depfile the build asked for, in one call. The
// race guard lives here too: an input that changed while nvcc ran, or a trace that lost events,
// makes the record untrusted and the object older than the compile, so that the next build (any
// build tool) compiles it again.
#pragma once

#include "compile/compile_plan.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"
#include "outcome/outcome.hpp"
#include "record/record.hpp"
#include "util/process.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace nvfresh {

struct CompileRun {
  std::int64_t start_ns = 0;  // CLOCK_REALTIME_COARSE, from race_guard_start_ns()
  std::int64_t end_ns = 0;
  Outcome why;  // why nvcc had to run (the skip decision's cause and reason)
};

struct FinishedCompile {
  const CompileRequest& request;
  const CompilerChain& chain;
  const CompilePlan& plan;
  CompileRun run;
  std::string_view trace_text;            // what the tracer sent while nvcc ran
  const CapturedOutput& captured;         // what the compile printed
  const std::optional<Record>& previous;  // the record of the last build of this object
};

// What a record says of the command, whatever made the object (a compile, a cache hit): the
// object, source, working directory, compiler and launchers, the signature and the depfile the
// build asked for.
Record record_of_command(const CompileRequest& request, const CompilerChain& chain,
                         const CompilePlan& plan);

// What in a file's text (or an argument) can make a compile's output depend on its inputs' mtimes,
// in words: "uses __TIMESTAMP__" (GCC expands it to the mtime of the file it is expanded in),
// "uses __TIME__" or "uses __DATE__" (the compile's own time: a compile after a touch, or any
// compile, gives another object),
// "has a GCC dependency pragma" (compares the current file's mtime with another file's: a warning,
// an error under -Werror), or "". Conservative: a mention in a comment counts, and a pragma is any
// logical line holding "dependency" with _Pragma, a #pragma directive, or "GCC" just before it. A
// spelling made by token pasting (__TIME ## STAMP__) is not found here, but its result is in the
// object: mtime_dependence_of searches it for each input's mtime (digest/timestamp_text.hpp).
std::string_view mtime_dependence(std::string_view text);

// Why the recorded compile's output may depend on its inputs' mtimes (Record::mtime_dependent): what
// mtime_dependence finds in each source, header and options file it read (their first 16 MiB; a
// file with a NUL byte in its first 4 KiB is binary and not searched), in its arguments and in its
// environment, naming where; else an input's mtime that the object's host bytes hold as
// __TIMESTAMP__ spells it; "" when nothing is found.
std::string mtime_dependence_of(const Record& record);

// Records a compile that succeeded: the record, then the build's depfile. Returns its outcome:
// compiled (with the cause nvcc ran for) or raced (with the cause the record is untrusted for).
// Throws on failure (an OutcomeError naming its cause, a FileWriteError, ...): nvcc has run, so the
// caller reports "not recorded" and never runs it again. *recorded, when given, gets the record
// as saved (the object cache stores from it).
Outcome record_compile(const FinishedCompile& compile, Record* recorded = nullptr);

}  // namespace nvfresh
