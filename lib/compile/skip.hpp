// Content decides: when the build tool re-runs a compile whose inputs did not change in content,
// nvfresh does not run nvcc. It re-creates the depfile exactly as the compile wrote it (ninja
// deleted it), replays what the compile printed, brings the object's mtime up to date and records
// the skip with its reason. Any doubt means "compile".
#pragma once

#include "compile/compile_plan.hpp"
#include "compile/console_replay.hpp"
#include "freshness/file_hasher.hpp"
#include "nvcc/command_line.hpp"
#include "outcome/outcome.hpp"
#include "record/record.hpp"
#include "record/record_root.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace nvfresh {

struct SkipDecision {
  bool skip = false;
  Outcome why;  // skipped with why nvcc need not run, or compiled with why it must (cause + words)
  // Not skipped only because the object is missing or was modified: the record vouches for every
  // input, probe, variable and PATH lookup, so the object it names may be restored as it was.
  bool object_only = false;
};

SkipDecision decide_skip(const std::optional<Record>& previous, const CompileRequest& request,
                         const CompilePlan& plan, FileHasher& hasher);

// Carries the skip out: depfile, console replay, object mtime, record. check_start_ns:
// CLOCK_REALTIME_COARSE taken before any input was looked at (the object's mtime becomes at least
// that). Throws on failure (the caller then runs the compiler plainly).
// `previous` is the loaded record (load_record with its bytes kept): the skip saves only what it
// changes, as the record's note; inputs touched with their content unchanged get their new stamp
// (restamp_unchanged_inputs), which writes the whole record once. `hasher`: the one decide_skip
// used.
// What an unchanged path changed in its record (a skip, an object restored from the cache): the
// object's new stamp and the history, saved as the record's note; or, when inputs touched with
// their content unchanged get their new stamp (restamped_inputs), the whole record, once.
void save_unchanged_record(const LoadedRecord& loaded, const FileFingerprint& output,
                           std::vector<HistoryEntry> history, FileHasher& hasher);

void perform_skip(const LoadedRecord& previous, const SkipDecision& decision,
                  const CompileRequest& request, const CompilePlan& plan,
                  std::int64_t check_start_ns, FileHasher& hasher);

}  // namespace nvfresh
