#include "freshness/input_check.hpp"

#include "util/file_io.hpp"
#include "util/string_hash.hpp"

#include <algorithm>
#include <map>

namespace nvfresh {

namespace {

constexpr std::int64_t k_second_ns = 1'000'000'000;

std::int64_t floor_to_second(std::int64_t ns)
{
  return ns - ((ns % k_second_ns) + k_second_ns) % k_second_ns;
}

// Adds what changed about one input to `out`; false when it still holds.
bool input_changed(const RecordedInput& input, FileHasher& hasher, std::vector<StaleReason>& out)
{
  std::optional<FileFingerprint> now;
  if (hasher.unchanged(input.file, &now)) {
    return false;
  }
  const std::string& path = input.file.path;
  const std::string before = input.file.hash.short_hex();
  if (!hasher.stat(path).exists) {
    out.push_back({Cause::input_missing, path, before, ""});
  } else if (!now) {
    out.push_back({Cause::input_unstable, path, before, ""});
  } else {
    auto kind = input.role == InputRole::tool ? Cause::tool_changed : Cause::input_changed;
    out.push_back({kind, path, before, now->hash.short_hex()});
  }
  return true;
}

bool same_directory(const FileStat& now, const DirectoryStamp& stamp)
{
  return now.exists && now.is_directory && now.inode == stamp.inode && now.device == stamp.device &&
         now.mtime_ns == stamp.mtime_ns && now.ctime_ns == stamp.ctime_ns;
}

// Which probe groups their directory proves absent, with one stat per directory (and none for a
// directory below one that does not resolve to a directory: nothing below it resolves either).
class ProbeDirectories {
  using Stamps = StringViewMap<const DirectoryStamp*>;

public:
  ProbeDirectories(const RecordedLookups& lookups, FileHasher& hasher)
  {
    Stamps stamps;
    for (const auto& stamp : lookups.probe_dirs) {
      stamps.emplace(stamp.path, &stamp);
    }
    std::vector<const ProbeGroup*> groups;
    groups.reserve(lookups.probes.size());
    for (const auto& group : lookups.probes) {
      if (!group.dir.empty()) {
        groups.push_back(&group);
      }
    }
    std::sort(groups.begin(), groups.end(), [](const ProbeGroup* a, const ProbeGroup* b) {
      return a->dir < b->dir;  // parents first
    });
    m_proof.reserve(groups.size());
    for (const ProbeGroup* group : groups) {
      m_proof.emplace(group->dir, judge(*group, stamps, hasher));
    }
  }

  bool proves_absent(const ProbeGroup& group) const
  {
    auto found = m_proof.find(group.dir);
    return found != m_proof.end() && found->second != Proof::none;
  }

private:
  enum class Proof { none, no_directory, unchanged };

  static bool stamp_holds(const std::string& dir, const Stamps& stamps, FileHasher& hasher)
  {
    auto stamp = stamps.find(dir);
    return stamp != stamps.end() && same_directory(hasher.stat(dir), *stamp->second);
  }

  Proof judge(const ProbeGroup& group, const Stamps& stamps, FileHasher& hasher) const
  {
    auto parent = m_proof.find(probe_directory(group.dir));
    if (parent != m_proof.end() && parent->second == Proof::no_directory) {
      return Proof::no_directory;
    }
    if (!group.absent_under.empty() && stamp_holds(group.absent_under, stamps, hasher)) {
      return Proof::no_directory;  // its ancestor proves it still does not exist
    }
    const FileStat now = hasher.stat(group.dir);
    if (!now.exists || !now.is_directory) {
      return Proof::no_directory;
    }
    auto stamp = stamps.find(group.dir);
    return stamp != stamps.end() && same_directory(now, *stamp->second) ? Proof::unchanged
                                                                        : Proof::none;
  }

  StringViewMap<Proof> m_proof;  // by group directory
};

}  // namespace

std::vector<StaleReason> changed_lookups(const RecordedLookups& lookups, FileHasher& hasher,
                                         LookupCheck mode, std::size_t* touched_count)
{
  std::vector<StaleReason> changes;
  const bool first_only = mode == LookupCheck::first_change;
  std::vector<const std::string*> paths;
  paths.reserve(lookups.inputs.size());
  for (const auto& input : lookups.inputs) {
    paths.push_back(&input.file.path);
  }
  // With them, on the same threads, the directories that vouch for the probes (ProbeDirectories
  // stats each of them next): one per group, many groups under one absent_under ancestor.
  StringViewSet vouching;
  vouching.reserve(lookups.probes.size());
  for (const auto& group : lookups.probes) {
    const std::string& directory = group.absent_under.empty() ? group.dir : group.absent_under;
    if (!directory.empty() && vouching.insert(directory).second) {
      paths.push_back(&directory);
    }
  }
  const std::vector<FileStat> now = hasher.stat_ahead(paths);  // the inputs' first
  std::vector<std::size_t> touched;  // their content decides: hashed ahead, in parallel
  std::vector<const std::string*> touched_paths;
  for (std::size_t i = 0; i < lookups.inputs.size(); ++i) {
    if (!lookups.inputs[i].file.same_stamp_as(now[i])) {
      touched.push_back(i);
      touched_paths.push_back(&lookups.inputs[i].file.path);
    }
  }
  if (touched_count != nullptr) {
    *touched_count = touched.size();
  }
  hasher.hash_ahead(touched_paths);
  for (const std::size_t i : touched) {  // an input with its stamp holds (FileHasher::unchanged)
    if (input_changed(lookups.inputs[i], hasher, changes) && first_only) {
      return changes;
    }
  }
  const ProbeDirectories dirs(lookups, hasher);
  for (const auto& group : lookups.probes) {
    if (dirs.proves_absent(group)) {
      continue;
    }
    for (const auto& name : group.names) {
      std::string probe = probe_path(group, name);
      if (!hasher.stat(probe).exists) {
        continue;
      }
      changes.push_back({Cause::probe_found, std::move(probe), "", ""});
      if (first_only) {
        return changes;
      }
    }
  }
  return changes;
}

std::optional<StaleReason> first_changed_lookup(const RecordedLookups& lookups, FileHasher& hasher)
{
  auto changes = changed_lookups(lookups, hasher, LookupCheck::first_change);
  return changes.empty() ? std::nullopt : std::optional<StaleReason>(std::move(changes.front()));
}

std::optional<std::vector<RecordedInput>> restamped_inputs(const std::vector<RecordedInput>& inputs,
                                                           FileHasher& hasher, std::int64_t now_ns,
                                                           std::int64_t settle_ns)
{
  std::optional<std::vector<RecordedInput>> restamped;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FileFingerprint& recorded = inputs[i].file;
    if (recorded.same_stamp_as(hasher.stat(recorded.path))) {
      continue;
    }
    const FingerprintResult current = hasher.fingerprint(recorded.path);
    if (current.fingerprint && current.fingerprint->hash == recorded.hash &&
        now_ns - current.fingerprint->ctime_ns >= settle_ns) {
      if (!restamped) {
        restamped = inputs;
      }
      (*restamped)[i].file = *current.fingerprint;
    }
  }
  return restamped;
}

bool directory_may_vouch(const FileStat& dir, std::int64_t start_ns)
{
  // Timestamps may be coarser than the clock (a whole second on some file systems): a change made
  // after the compile started can carry a time a little before it, never one before its second.
  const std::int64_t limit = floor_to_second(start_ns);
  return dir.exists && dir.is_directory && dir.mtime_ns < limit && dir.ctime_ns < limit;
}

std::vector<DirectoryStamp> stamp_probe_directories(std::vector<ProbeGroup>& probes,
                                                    std::int64_t start_ns)
{
  // A directory vouches only when every entry it must lack is absent (lstat), checked before the
  // directory's stat: a change in between stamps the directory at or after start_ns.
  std::map<std::string, bool, std::less<>> all_absent;  // directory -> its entries were absent
  for (const auto& group : probes) {
    if (group.dir.empty()) {
      continue;
    }
    auto entry = all_absent.emplace(group.dir, true).first;
    for (const auto& name : group.names) {
      if (entry->second && lstat_file(probe_path(group, name)).exists) {
        entry->second = false;
      }
    }
  }
  // A directory that does not exist: its nearest existing ancestor may prove it still does not.
  for (auto& group : probes) {
    group.absent_under.clear();
    if (group.dir.empty() || stat_file(group.dir).exists) {
      continue;
    }
    std::string_view child = group.dir;
    for (std::string_view up = probe_directory(child); !up.empty();
         child = up, up = probe_directory(child)) {
      const FileStat ancestor = stat_file(std::string(up));
      if (!ancestor.exists) {
        continue;
      }
      if (ancestor.is_directory && !lstat_file(std::string(child)).exists) {
        group.absent_under = std::string(up);
        all_absent.emplace(group.absent_under, true);
      }
      break;
    }
  }
  std::vector<DirectoryStamp> stamps;
  for (const auto& [dir, absent] : all_absent) {
    const FileStat now = absent ? stat_file(dir) : FileStat{};
    if (directory_may_vouch(now, start_ns)) {
      stamps.push_back({dir, now.inode, now.device, now.mtime_ns, now.ctime_ns});
    }
  }
  auto stamped = [&stamps](const std::string& dir) {
    auto found = std::lower_bound(
      stamps.begin(), stamps.end(), dir,
      [](const DirectoryStamp& stamp, const std::string& path) { return stamp.path < path; });
    return found != stamps.end() && found->path == dir;
  };
  for (auto& group : probes) {
    if (!group.absent_under.empty() && !stamped(group.absent_under)) {
      group.absent_under.clear();  // it could not vouch: the directory is stat'ed itself
    }
  }
  return stamps;  // sorted: the map's order
}

}  // namespace nvfresh
