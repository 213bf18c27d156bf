#include "step/step_store.hpp"

#include "cache/cache_store.hpp"
#include "step/step_trace.hpp"
#include "util/file_io.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace nvfresh {

namespace {

// The entry for a run that exited 0, or nullopt when it may not be stored.
std::optional<StepEntry> entry_of_run(const Step& step, const StepAccesses& accesses,
                                      FileHasher& hasher, std::int64_t started_ns)
{
  StepEntry entry;
  entry.tool = step.tool_exe;
  entry.pass = step.pass;
  for (const auto& path : accesses.reads) {
    auto read = hasher.fingerprint(path);
    // A file written while the step ran may not be what the tool saw.
    if (!read.fingerprint || read.stat.mtime_ns >= started_ns || read.stat.ctime_ns >= started_ns) {
      log::info("step not stored: {} changed while it ran", path);
      return std::nullopt;
    }
    entry.reads.push_back({path, read.fingerprint->hash});
  }
  entry.missing.assign(accesses.missing.begin(), accesses.missing.end());
  for (const auto& path : accesses.written) {
    if (!lstat_file(path).is_regular) {
      continue;  // a scratch file the tool removed
    }
    auto content = try_read_file(path);
    if (!content || content->empty()) {
      log::info("step not stored: its output {} is empty or unreadable", path);
      return std::nullopt;
    }
    StepOutput output{normalize_temp_names(path, step.temp),
                      normalize_temp_names(*content, step.temp)};
    // A temporary name the words do not give (one derived from them) would be another run's.
    if (has_stem(output.path, step.temp) || has_stem(output.content, step.temp)) {
      log::info("step not stored: {} names a temporary file its command does not", path);
      return std::nullopt;
    }
    entry.outputs.push_back(std::move(output));
  }
  if (entry.outputs.empty()) {
    return std::nullopt;
  }
  return entry;
}

// The whole entry of the run: what it wrote, read and printed; nullopt when it may not be stored.
std::optional<StepEntry> entry_of(const Step& step, const ToolRun& run, const KeyedInputs& inputs,
                                  FileHasher& hasher)
{
  auto accesses = run.accesses ? run.accesses : step_accesses(run.trace, step, inputs.given_files);
  auto entry = accesses ? entry_of_run(step, *accesses, hasher, run.started_ns) : std::nullopt;
  if (!entry) {
    return std::nullopt;
  }
  entry->run_ns = run.run_ns;
  entry->input_lines = inputs.lines_text;
  entry->out = normalize_temp_names(run.out, step.temp);
  entry->err = normalize_temp_names(run.err, step.temp);
  if (has_stem(entry->out, step.temp) || has_stem(entry->err, step.temp)) {
    return std::nullopt;
  }
  return entry;
}

// A sampled hit's run compared with its entry byte for byte (outputs, stdout, stderr), counted and
// reported as the object cache's verify-on-hit is: cache_verified or cache_mismatch.
Outcome verified_outcome(CacheStore& store, const Digest& key, const StepEntry& stored,
                         const std::optional<StepEntry>& run)
{
  if (!run) {
    return {OutcomeKind::compiled, Cause::step_not_cached,
            "sampled for verification, but the run could not be compared (not storable)"};
  }
  const std::string difference = step_output_difference(stored, *run);
  store.count(key, difference.empty() ? CacheCounter::verified : CacheCounter::verify_mismatches);
  log::info("step {} sampled for verification: {}", key.short_hex(),
            difference.empty() ? "the same" : difference);
  if (difference.empty()) {
    return {OutcomeKind::compiled, Cause::cache_verified,
            fmt::format("the step entry {} was run again and is the same", key.short_hex())};
  }
  return {OutcomeKind::compiled, Cause::cache_mismatch,
          fmt::format("the tool's output differs from the step entry {}: {}", key.short_hex(),
                      difference)};
}

}  // namespace

void keep_run(const StepPlan& plan, const Step& step, const ToolRun& run, const KeyedInputs& inputs,
              CacheStorage& storage, FileHasher& hasher, const StepReport& report)
{
  try {
    const std::optional<StepEntry>& verifying = plan.entry;
    auto entry = entry_of(step, run, inputs, hasher);
    if (verifying) {
      report.add(step, verified_outcome(storage.local(), plan.key, *verifying, entry), run.run_ns);
    }
    // A mismatch replaces the entry: a later hit serves what the tool gives.
    if (entry && storage.local().has_room() &&
        (!verifying || !step_output_difference(*verifying, *entry).empty())) {
      storage.store_step(plan.key, remote_arguments(step), *entry);
    }
  } catch (const std::exception& error) {
    log::info("step {} not stored: {}", plan.key.short_hex(), error.what());
  }
}

}  // namespace nvfresh
