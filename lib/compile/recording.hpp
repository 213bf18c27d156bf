// After nvcc succeeded: turn what the compile read (trace, nvcc's depfile, the command line) into
// the object's record, and write the depfile the build asked for. The race guard lives here too:
// an input that changed while nvcc ran makes the record untrusted and the object older than it.
#pragma once

#include "compile/compile_plan.hpp"
#include "compile/depfile.hpp"
#include "freshness/file_hasher.hpp"
#include "nvcc/command_line.hpp"
#include "nvcc/compiler_chain.hpp"
#include "record/record.hpp"
#include "util/process.hpp"

#include <cstdint>
#include <optional>

namespace nvfresh {

struct CompileRun {
  std::int64_t start_ns = 0;  // CLOCK_REALTIME_COARSE, from race_guard_start_ns()
  std::int64_t end_ns = 0;
  std::string why;  // why nvcc had to run (the skip decision's reason); "" if unknown
};

struct RecordingInput {
  const CompileRequest& request;
  const CompilerChain& chain;
  const CompilePlan& plan;
  CompileRun run;
  std::optional<Depfile> nvcc_depfile;  // what nvcc itself wrote, when the build asked for one
  std::optional<Record> previous;       // the record of the last build of this object
};

// Throws std::runtime_error when the compile's result cannot be described (no output, ...).
Record make_record(const RecordingInput& input, FileHasher& hasher);

// The prerequisites of the depfile for the build tool: nvcc's own verbatim, then every other
// recorded input (files only traced, tools). Empty when one of them cannot be written so that make
// and ninja read it back (nvcc's own depfile is then left in place).
std::vector<std::string> depfile_prerequisites(const Record& record, const CompilePlan& plan,
                                               const std::optional<Depfile>& nvcc_depfile);

// Writes the depfile the build asked for (target as given by -MT), atomically.
void write_build_depfile(const CompilePlan& plan, const std::vector<std::string>& prerequisites,
                         bool phony_targets);

// What the compile printed, for replay, and how it rendered it: which streams were terminals and,
// when one was, the terminal environment (TERM, COLUMNS, GCC_COLORS, ...) of env.
void set_console(Record& record, const CapturedOutput& captured, const Environment& env);

// When the record is untrusted (an input changed during the compile), make the object older
// than that change, so that make and ninja (any version) rebuild it on the next run.
void apply_race_guard(Record& record);  // updates record.output's stat fields

}  // namespace nvfresh
