#include "compile/serve.hpp"

#include "compile/build_depfile.hpp"
#include "compile/console_replay.hpp"
#include "compile/recording.hpp"
#include "compile/skip.hpp"
#include "freshness/race_rule.hpp"
#include "record/record_root.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/keep_until_exit.hpp"
#include "util/process.hpp"
#include "util/time_format.hpp"

#include <fmt/format.h>

namespace nvfresh {

namespace {

// The entry's console output and depfile as this tree spells them.
void set_console(Record& record, const CacheEntry& entry, const PathMap& map)
{
  record.console_mode = entry.console_mode;
  record.console_out = map.text_to_tree(entry.console_out);
  record.console_err = map.text_to_tree(entry.console_err);
  record.console_terminals = entry.console_terminals;
  record.console_terminal_env = entry.console_terminal_env;
}

Record record_skeleton(const CacheHit& hit, const ServeRequest& serve)
{
  Record record = record_of_command(serve.request, serve.chain, serve.plan);
  record.cache_entry = hit.key;
  record.nvcc_version = hit.entry.nvcc_version;
  record.inputs_from_trace = true;
  record.components = hit.entry.components;
  set_console(record, hit.entry, hit.map);
  for (const auto& dep : hit.entry.depfile_prerequisites) {
    record.depfile_prerequisites.push_back(hit.map.text_to_tree(dep));
  }
  record.probes = hit.probes;
  for (DirectoryStamp dir : hit.matched.probe_dirs) {  // the next skip checks them as they are
    dir.path = hit.map.to_tree(dir.path);
    record.probe_dirs.push_back(std::move(dir));
  }
  return record;
}

// The matched input set as this tree has it now: the fingerprints the lookup checked (its stamps
// vouched, or hashed), an options file's own; false (with *why) when a file no longer hashes as the
// entry says. The race rule's stat after the object is written still sees a later change.
bool add_inputs(Record& record, const CacheHit& hit, FileHasher& hasher, std::string* why)
{
  record.inputs.reserve(hit.matched.inputs.size());
  for (size_t i = 0; i < hit.matched.inputs.size(); ++i) {
    const ManifestInput& input = hit.matched.inputs[i];
    const bool options_file = input.role == role_name(InputRole::options_file);
    RecordedInput recorded;
    if (i < hit.inputs.size() && !options_file) {
      recorded.file = hit.inputs[i].file;
      if (recorded.file.hash != input.hash) {
        *why = recorded.file.path + " changed since the lookup";
        return false;
      }
    } else {
      const std::string path = hit.map.to_tree(input.path);
      FingerprintResult now = hasher.fingerprint(path);
      if (!now.fingerprint ||
          (options_file ? options_file_hash(path, hit.map) : now.fingerprint->hash) != input.hash) {
        *why = path + " changed since the lookup";
        return false;
      }
      recorded.file = *now.fingerprint;
    }
    recorded.role = role_from_name(input.role).value_or(InputRole::header);
    recorded.passes = split_passes(input.passes);
    record.inputs.push_back(std::move(recorded));
  }
  return true;
}

// The fingerprint with the stat stamp of the file now (its content is the fingerprint's).
FileFingerprint with_stamp_of(FileFingerprint fingerprint, const FileStat& now)
{
  fingerprint.size = now.size;
  fingerprint.mtime_ns = now.mtime_ns;
  fingerprint.ctime_ns = now.ctime_ns;
  fingerprint.inode = now.inode;
  return fingerprint;
}

// The race guard of a compile, for a served object (freshness/race_rule.hpp): `written` changed
// since the lookup began, so the record is untrusted and the object older than that start (its
// new stamp recorded), so that the next build compiles it.
void mark_raced(Record& record, const std::string& written, std::int64_t start_ns)
{
  record.trusted = false;
  record.untrusted_reason =
    fmt::format("{} changed while the object was served from the cache", written);
  set_mtime_ns(record.object, start_ns - k_one_second_ns);
  record.output = with_stamp_of(record.output, stat_file(record.object));
}

void write_depfile_of(const Record& record, const ServeRequest& serve)
{
  if (!serve.plan.depfile_path.empty()) {
    write_build_depfile(serve.plan.depfile_path, serve.plan.depfile_target,
                        record.depfile_prerequisites, serve.request.depfile.phony_targets);
  }
}

// The entry came through CacheStore::read_entry, which checked that its object hashes to
// object_digest: that is the output's content hash, not computed a second time.
void write_object(Record& record, const CacheEntry& entry)
{
  write_file_atomically(record.object, entry.object);
  FileStat written = stat_file(record.object);
  record.output = {record.object,    entry.object_digest, written.size,
                   written.mtime_ns, written.ctime_ns,    written.inode};
}

}  // namespace

// The directory of the record root's build tree: where the tree's paths are relative to.
std::string build_tree_of(const CompilePlan& plan)
{
  constexpr std::string_view k_suffix = "/.nvfresh";
  const std::string& root = plan.record_root;
  if (root.size() > k_suffix.size() && root.ends_with(k_suffix)) {
    return root.substr(0, root.size() - k_suffix.size());
  }
  return find_build_tree(plan.working_dir).value_or(plan.working_dir);
}

CompileIdentity compile_identity(const CompileRequest& request, const CompilePlan& plan)
{
  return {request.signature_args, plan.signature_env,  plan.working_dir, plan.source,
          plan.compiler_path,     build_tree_of(plan), plan.object};
}

std::string serve_doubt(const CacheHit& hit, const CompilePlan& plan)
{
  if (!plan.depfile_path.empty() && hit.entry.depfile_prerequisites.empty()) {
    return "the build wants a depfile and the entry has none";
  }
  Record console;
  set_console(console, hit.entry, hit.map);
  return console_replay_doubt(console, terminal_streams(), plan.child_env);
}

std::string served_description(const Digest& key, const CacheEntry& entry)
{
  return fmt::format("served from the cache (entry {}, first compiled {} in {})", key.short_hex(),
                     format_local_time(entry.created_ns, true),
                     entry.origin_tree.empty() ? std::string("a tree of the remote's writer")
                                               : entry.origin_tree);
}

std::string served_description(const CacheHit& hit)
{
  std::string description = served_description(hit.key, hit.entry);
  if (!hit.comment_only.empty()) {
    description +=
      fmt::format("; {} differ{} from it only in comments", fmt::join(hit.comment_only, ", "),
                  hit.comment_only.size() == 1 ? "s" : "");
  }
  return hit.elsewhere.empty() ? description : description + "; " + hit.elsewhere;
}

Outcome serve_recorded(const Digest& key, const CacheEntry& entry, const LoadedRecord& loaded,
                       const ServeRequest& serve, FileHasher& hasher, const std::string& elsewhere)
{
  const Record& record = *loaded.record;
  write_file_atomically(record.object, entry.object);
  const std::string description = served_description(key, entry) + ", the object its record names" +
                                  (elsewhere.empty() ? "" : "; " + elsewhere);
  if (auto written = first_input_written_since(record.inputs, serve.start_ns)) {
    Record raced = record;
    mark_raced(raced, *written, serve.start_ns);
    add_history(raced,
                {now_ns(), std::string(outcome_name(OutcomeKind::raced)), raced.untrusted_reason});
    save_record(serve.plan.record_file, raced);
    write_depfile_of(raced, serve);
    replay_console(raced);
    return Outcome{OutcomeKind::raced, Cause::input_changed_during_compile, raced.untrusted_reason};
  }
  std::vector<HistoryEntry> history = record.history;
  add_history(history, {now_ns(), std::string(outcome_name(OutcomeKind::served)), description});
  save_unchanged_record(loaded, with_stamp_of(record.output, stat_file(record.object)),
                        std::move(history), hasher);
  write_depfile_of(record, serve);
  replay_console(record);
  return Outcome{OutcomeKind::served, Cause::cache_hit, description};
}

std::optional<Outcome> serve_hit(const CacheHit& hit, const ServeRequest& serve, FileHasher& hasher,
                                 std::string* why)
{
  if (std::string doubt = serve_doubt(hit, serve.plan); !doubt.empty()) {
    *why = doubt;
    return std::nullopt;
  }
  Record record = record_skeleton(hit, serve);
  if (!add_inputs(record, hit, hasher, why)) {
    return std::nullopt;
  }
  write_object(record, hit.entry);
  record.start_ns = serve.start_ns;
  record.end_ns = now_ns();
  if (auto written = first_input_written_since(record.inputs, serve.start_ns)) {
    mark_raced(record, *written, serve.start_ns);
  }
  if (serve.previous) {
    record.history = serve.previous->history;
  }
  const std::string description = served_description(hit);
  add_history(record,
              {record.end_ns,
               std::string(outcome_name(record.trusted ? OutcomeKind::served : OutcomeKind::raced)),
               record.trusted ? description : record.untrusted_reason});
  // A fresh build dir writes a record per hit: the faster compression is a third of that write.
  save_record(serve.plan.record_file, record, Compression::faster);
  write_depfile_of(record, serve);
  replay_console(record);
  const Record& kept = keep_until_exit(std::move(record));  // not freed string by string
  if (!kept.trusted) {
    return Outcome{OutcomeKind::raced, Cause::input_changed_during_compile, kept.untrusted_reason};
  }
  return Outcome{OutcomeKind::served, Cause::cache_hit, description};
}

}  // namespace nvfresh
