// The one check that a skip, `check`/`sync` and the object cache's lookup share: does every input
// a record lists still have its recorded content, and does every probe (a lookup that found
// nothing: an include candidate in an earlier -I directory, a __has_include) still find nothing?
//
// Inputs: the stat stamp (size, mtime, ctime, inode) is a shortcut; otherwise the content hash
// decides. Probes are checked by their directory (record.hpp's ProbeGroup); a group needs no stat
// of its probes when its directory proves them absent:
//   - the directory does not resolve to a directory now (stat fails, or it is a file): then no
//     path inside it resolves either;
//   - the record holds a stamp of the directory (DirectoryStamp) and stat gives the same inode,
//     device, mtime and ctime: no entry was created, removed or renamed in it since the stamp, and
//     the stamp was taken only when its probes were absent and the directory had not changed since
//     before the second the compile started (a directory changed at or after then proves nothing);
//   - the directory did not exist, and the stamp of the ancestor it names (absent_under) still
//     holds: the ancestor's entry on the way to it was absent when the stamp was taken, and no
//     entry was created in the ancestor since, so the directory still does not exist. Checked
//     before the directory itself, so that an unchanged tree stats the few -I directories, not
//     the hundreds of "bits/" and "cutlass/" directories below them that nothing ever made.
// Any other probe is stat'ed itself. So an unchanged tree costs one stat per probe directory, not
// one per probe.
#pragma once

#include "freshness/file_hasher.hpp"
#include "freshness/stale_reason.hpp"
#include "record/record.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

// What a record says about its inputs: views into it (or into an object cache entry).
struct RecordedLookups {
  const std::vector<RecordedInput>& inputs;
  const std::vector<ProbeGroup>& probes;
  const std::vector<DirectoryStamp>& probe_dirs;
  static RecordedLookups of(const Record& record)
  {
    return {record.inputs, record.probes, record.probe_dirs};
  }
};

enum class LookupCheck {
  first_change,  // stop at the first input or probe that no longer holds (skip, cache lookup)
  every_change,  // every one of them (check, explain)
};

// Empty when every input and every probe still holds; else what changed (input_changed,
// tool_changed, input_missing, input_unstable, probe_found), inputs first, in record order.
// `touched`, when given, gets how many inputs no longer have their recorded stat stamp (their
// content was then compared).
std::vector<StaleReason> changed_lookups(const RecordedLookups& lookups, FileHasher& hasher,
                                         LookupCheck mode = LookupCheck::every_change,
                                         std::size_t* touched = nullptr);

// The first input or probe that no longer holds; nullopt when all hold.
std::optional<StaleReason> first_changed_lookup(const RecordedLookups& lookups, FileHasher& hasher);

// After a check found every input unchanged in content: the inputs whose stat changed (a touch, a
// branch switch and back) get their current stamp, so that the next check needs no hashing. Only
// a stamp whose ctime is settle_ns old (FileHasher's rule: a same-size rewrite within one coarse
// timestamp tick keeps its stat) and whose content hash is still the recorded one. Returns how
// nullopt when no input got a new stamp, else the inputs with the new stamps.
std::optional<std::vector<RecordedInput>> restamped_inputs(
  const std::vector<RecordedInput>& inputs, FileHasher& hasher, std::int64_t now_ns,
  std::int64_t settle_ns = FileHasher::k_default_settle_ns);

// When a compile is recorded: a stamp for each directory of `probes` that can vouch for them (every
// probe in it lstat-absent now, the directory's mtime and ctime before the second of start_ns),
// sorted by path. A group whose directory does not exist gets its nearest existing ancestor as
// absent_under, with a stamp of that ancestor, when the ancestor's entry on the way down is
// lstat-absent and the ancestor may vouch (it holds to the same rules as a directory of probes).
std::vector<DirectoryStamp> stamp_probe_directories(std::vector<ProbeGroup>& probes,
                                                    std::int64_t start_ns);

// The stamp rule on its own: may a directory stat'ed as `dir` vouch for probes of a compile that
// started at start_ns?
bool directory_may_vouch(const FileStat& dir, std::int64_t start_ns);

}  // namespace nvfresh
