// The per-object record: everything nvfresh knows about how one object came to be.
// One record per object, kept inside the build tree (see record_root.hpp), written atomically.
// The on-disk grammar is in record_format.hpp.
#pragma once

#include "record/input_role.hpp"
#include "record/pass_times.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

// The content identity of one file at one moment: stat fields are a shortcut, the hash decides.
struct FileFingerprint {
  std::string path;  // absolute
  Digest hash;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileFingerprint&) const = default;
  // Whether stat says the file still has this stamp (size, mtime, ctime, inode): the shortcut
  // that spares hashing it.
  bool same_stamp_as(const FileStat& now) const
  {
    return now.exists && now.size == size && now.mtime_ns == mtime_ns && now.ctime_ns == ctime_ns &&
           now.inode == inode;
  }
};

struct RecordedInput {
  FileFingerprint file;
  InputRole role = InputRole::header;
  std::vector<std::string> passes;  // "host", "compute_80", "sm_80", ... (empty: not known)
  bool operator==(const RecordedInput&) const = default;
};

// The lookups that found nothing in one directory (probes: an include candidate in an earlier -I
// directory, a __has_include, a program in an earlier PATH directory): each dir + "/" + name was
// absent when the compile ran. A record keeps them by directory because the directory is what a
// check looks at (freshness/input_check.hpp): one stat for the group, not one per probe.
struct ProbeGroup {
  std::string dir;  // absolute ("/" for the root); "" for probes that are not an absolute path
                    // below a directory (names are then the whole paths, each stat'ed itself)
  std::vector<std::string> names;  // entry names in dir, in the order the probes were recorded
  // For a directory that did not exist: an existing ancestor whose entry on the way to dir was
  // absent (lstat) when its DirectoryStamp was taken. While that stamp holds, no entry was
  // created in it since, so dir still does not exist ("": none; dir is then stat'ed itself).
  std::string absent_under;
  bool operator==(const ProbeGroup&) const = default;
};

// A directory whose entries vouch for the probes in it (a ProbeGroup of that dir):
// stamped when the compile's record was written, only when every such probe was absent (lstat:
// not even a dangling symlink) and the directory had not changed since before the second the
// compile started. While stat still gives the same inode, device, mtime and ctime, no entry of it
// was created, removed or renamed since, so its probes still find nothing.
struct DirectoryStamp {
  std::string path;  // absolute, as the probes spell their parent
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const DirectoryStamp&) const = default;
};

// How the object on disk came to be, one entry per build that touched it (newest last).
struct HistoryEntry {
  std::int64_t time_ns = 0;
  std::string event;   // "compiled", "raced", "skipped", ...
  std::string reason;  // why, in words
  bool operator==(const HistoryEntry&) const = default;
};

struct Record {
  std::string object;                        // absolute path of the output
  std::string source;                        // absolute path of the translation unit
  std::string working_dir;                   // where the compile ran
  std::string compiler;                      // the nvcc that ran (absolute)
  std::vector<std::string> launcher_prefix;  // e.g. ccache, between nvfresh and nvcc
  std::vector<std::string> signature_args;   // normalized arguments (command_line.hpp)
  std::map<std::string, std::string> env;    // the compile-relevant environment (set ones only)
  Digest signature;                          // hash of the command signature (args, env, cwd)
  std::string nvcc_version;                // e.g. "Cuda compilation tools, release 13.0, V13.0.88"
  std::vector<RecordedInput> inputs;       // every file any pass read, and the tools
  std::vector<ProbeGroup> probes;          // lookups that found nothing, by directory
  std::vector<DirectoryStamp> probe_dirs;  // directories that vouch for their probes (sorted)
  bool inputs_from_trace = true;           // false: only nvcc's depfile was available
  FileFingerprint output;
  std::string depfile_path;  // where the build asked for a depfile ("" = none)
  std::string depfile_target;
  bool depfile_phony = false;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  // When each program of the compile ran (pass_times.hpp); empty when not traced, or recorded by an
  // nvfresh before per-pass times.
  std::vector<PassTime> pass_times;
  bool trusted = true;  // false when an input changed while it compiled
  std::string untrusted_reason;
  std::vector<HistoryEntry> history;
  // What the compile printed, replayed when a later build skips nvcc. "none": not captured (too
  // large, or an nvfresh that did not capture terminals), "combined": stdout and stderr were one
  // stream (in console_out), "separate".
  std::string console_mode = "none";
  std::string console_out;
  std::string console_err;
  std::string
    console_terminals;  // which streams were terminals: "", "stdout", "stderr", "stdout,stderr"
  std::map<std::string, std::string>
    console_terminal_env;                          // TERM & co. when a stream was a terminal
  std::vector<std::string> depfile_prerequisites;  // as written to the build's depfile
  // The output's normalized per-component digests ("host code", "sm_80 cubin", ...): equal across
  // identical compiles although the raw objects differ (see lib/digest/). Empty when unreadable.
  std::map<std::string, Digest> components;
  // The object cache's entry that holds the output's bytes: the one it was stored as, or served
  // from. When nothing but the object changed since (a clean), the object is restored from it,
  // checked against output.hash, without the manifest's lookup (compile/serve.hpp).
  std::optional<Digest> cache_entry;
  // Why the output depends on its inputs' mtimes, in words ("/src/k.cu uses __TIMESTAMP__"); ""
  // when nothing says so. Set when the compile is recorded (compile/recording.hpp): then an input
  // whose mtime changed makes the object stale although its content did not (freshness.hpp), and
  // the object cache does not keep the compile.
  std::string mtime_dependent;
  bool operator==(const Record&) const = default;
};

// The record text's format version (record_format.hpp has the history): raised with each
// change an older reader cannot read, so that it finds a version it does not know (stale) instead of
// misreading. Versions from the oldest readable one on are read: what they lack is optional.
constexpr int k_record_format_version = 7;
constexpr int k_oldest_readable_record_format_version = 1;
constexpr size_t k_record_history_limit = 16;

// Appends to the record's history, keeping only the newest k_record_history_limit entries.
void add_history(Record& record, HistoryEntry entry);
void add_history(std::vector<HistoryEntry>& history, HistoryEntry entry);

// The directory a probe is looked up in ("/a/b" for "/a/b/c.h", "/" for "/c.h"); "" when the path
// is not absolute or ends in '/' (such a probe is always stat'ed itself).
std::string_view probe_directory(std::string_view probe);

// Probe paths (absolute, or relative) grouped by the directory they were looked up in: groups
// sorted by dir, names in their order in `paths`; absent_under left empty.
std::vector<ProbeGroup> group_probes(const std::vector<std::string>& paths);
// One probe's whole path.
std::string probe_path(const ProbeGroup& group, std::string_view name);
// Every probe's whole path, group by group.
std::vector<std::string> probe_paths(const std::vector<ProbeGroup>& probes);
size_t probe_count(const std::vector<ProbeGroup>& probes);

std::string serialize_record(const Record& record);

// The head a record file carries before its compressed text (record_root.cpp): which object it
// describes, readable when the rest of the file is torn, so that a corrupt record can still name
// its object (and the object be rebuilt). It has its own checksum: a head that fails it names
// nothing, and nothing is written because of it.
struct RecordHead {
  std::string object;
  std::string source;
  bool operator==(const RecordHead&) const = default;
};

std::string serialize_record_head(const RecordHead& head);
std::optional<RecordHead> parse_record_head(std::string_view text);

// What a skip changes about a record (the output's stamp: the skip brings the object's mtime up
// to date; and the history), kept in a note after the record's compressed text
// (record_container.hpp), so that a skip neither serializes nor compresses a CUTLASS-sized
// record again. A note applies only to the text whose checksum it names; any other note, or one
// that fails its own checksum, is ignored (the record then says what it said before the skip).
struct RecordNote {
  std::string base;  // the checksum of the record text it applies to (its "checksum" line)
  FileFingerprint output;
  std::vector<HistoryEntry> history;  // the record's whole history, newest last
  bool operator==(const RecordNote&) const = default;
};

std::string serialize_record_note(const RecordNote& note);
std::optional<RecordNote> parse_record_note(std::string_view text);

// The checksum a record text ends with (its last line); "" when it has none.
std::string record_text_checksum(std::string_view text);

// The record with the note applied, when the note names its text (the checksum that text ends
// with: record_text_checksum); else the record unchanged.
void apply_record_note(Record& record, std::string_view text_checksum, const RecordNote& note);

// nullopt when the text is not a complete, intact record of this format version; *error then says
// what is wrong ("checksum mismatch", "format version 0, expected 1", ...). Never throws.
// threads > 1: a big record's lines are parsed in pieces on up to that many threads (the unchanged
// path of one compile, whose critical path the parse is); the result, and the error named, are the
// same as on one.
std::optional<Record> parse_record(const std::string& text, std::string* error = nullptr,
                                   size_t threads = 1);

std::string_view role_name(InputRole role);
std::optional<InputRole> role_from_name(std::string_view name);

// An input's passes as a record writes them: "-" for none, else comma-separated; and back.
std::string join_passes(const std::vector<std::string>& passes);
std::vector<std::string> split_passes(const std::string& text);

}  // namespace nvfresh
