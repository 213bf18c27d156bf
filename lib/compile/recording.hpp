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

// Records a compile that succeeded: the record, then the build's depfile. Returns its outcome:
// compiled (with the cause nvcc ran for) or raced (with the cause the record is untrusted for).
// Throws on failure (an OutcomeError naming its cause, a FileWriteError, ...): nvcc has run, so the
// caller reports "not recorded" and never runs it again. *recorded, when given, gets the record
// as saved (the object cache stores from it).
Outcome record_compile(const FinishedCompile& compile, Record* recorded = nullptr);

}  // namespace nvfresh
