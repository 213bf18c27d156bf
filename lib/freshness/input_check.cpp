#include "freshness/input_check.hpp"

#include "util/file_io.hpp"

#include <algorithm>
#include <unordered_map>

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

// Which probes their directory proves absent, with one stat per directory (and none for a
// directory below one that does not resolve to a directory: nothing below it resolves either).
class ProbeDirectories {
public:
  ProbeDirectories(const RecordedLookups& lookups, FileHasher& hasher)
  {
    std::unordered_map<std::string_view, const DirectoryStamp*> stamps;
    for (const auto& stamp : lookups.probe_dirs) {
      stamps.emplace(stamp.path, &stamp);
    }
    m_of_probe.reserve(lookups.missing.size());
    for (const auto& probe : lookups.missing) {
      const std::string_view dir = probe_directory(probe);
      m_of_probe.push_back(dir.empty() ? nullptr
                                       : &m_proof.try_emplace(dir, Proof::none).first->second);
    }
    std::vector<std::string_view> dirs;
    dirs.reserve(m_proof.size());
    for (const auto& [dir, proof] : m_proof) {
      dirs.push_back(dir);
    }
    std::sort(dirs.begin(), dirs.end());  // parents first
    for (std::string_view dir : dirs) {
      m_proof[dir] = judge(dir, stamps, hasher);
    }
  }

  bool proves_absent(size_t probe) const
  {
    return m_of_probe[probe] != nullptr && *m_of_probe[probe] != Proof::none;
  }

private:
  enum class Proof { none, no_directory, unchanged };

  Proof judge(std::string_view dir,
              const std::unordered_map<std::string_view, const DirectoryStamp*>& stamps,
              FileHasher& hasher) const
  {
    auto parent = m_proof.find(probe_directory(dir));
    if (parent != m_proof.end() && parent->second == Proof::no_directory) {
      return Proof::no_directory;
    }
    const FileStat now = hasher.stat(std::string(dir));
    if (!now.exists || !now.is_directory) {
      return Proof::no_directory;
    }
    auto stamp = stamps.find(dir);
    return stamp != stamps.end() && same_directory(now, *stamp->second) ? Proof::unchanged
                                                                        : Proof::none;
  }

  std::unordered_map<std::string_view, Proof> m_proof;
  std::vector<const Proof*> m_of_probe;  // the proof of each probe's directory, by index
};

}  // namespace

std::string_view probe_directory(std::string_view probe)
{
  const size_t slash = probe.rfind('/');
  if (probe.empty() || probe.front() != '/' || slash == std::string_view::npos ||
      slash + 1 == probe.size()) {
    return {};
  }
  return slash == 0 ? std::string_view("/") : probe.substr(0, slash);
}

std::vector<StaleReason> changed_lookups(const RecordedLookups& lookups, FileHasher& hasher,
                                         LookupCheck mode)
{
  std::vector<StaleReason> changes;
  const bool first_only = mode == LookupCheck::first_change;
  std::vector<const std::string*> paths;
  paths.reserve(lookups.inputs.size());
  for (const auto& input : lookups.inputs) {
    paths.push_back(&input.file.path);
  }
  hasher.stat_ahead(paths);
  std::vector<const std::string*> touched;  // their content decides: hashed ahead, in parallel
  for (const auto& input : lookups.inputs) {
    if (!input.file.same_stamp_as(hasher.stat(input.file.path))) {
      touched.push_back(&input.file.path);
    }
  }
  hasher.hash_ahead(touched);
  for (const auto& input : lookups.inputs) {
    if (input_changed(input, hasher, changes) && first_only) {
      return changes;
    }
  }
  const ProbeDirectories dirs(lookups, hasher);
  for (size_t i = 0; i < lookups.missing.size(); ++i) {
    const std::string& probe = lookups.missing[i];
    if (dirs.proves_absent(i) || !hasher.stat(probe).exists) {
      continue;
    }
    changes.push_back({Cause::probe_found, probe, "", ""});
    if (first_only) {
      return changes;
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

std::vector<DirectoryStamp> stamp_probe_directories(const std::vector<std::string>& missing,
                                                    std::int64_t start_ns)
{
  // A directory vouches only when every probe in it is absent as an entry (lstat), checked before
  // the directory's stat: a change in between stamps the directory at or after start_ns.
  std::unordered_map<std::string_view, bool> all_absent;
  for (const auto& probe : missing) {
    const std::string_view dir = probe_directory(probe);
    if (dir.empty()) {
      continue;
    }
    auto entry = all_absent.emplace(dir, true).first;
    if (entry->second && lstat_file(probe).exists) {
      entry->second = false;
    }
  }
  std::vector<DirectoryStamp> stamps;
  for (const auto& [dir, absent] : all_absent) {
    const FileStat now = absent ? stat_file(std::string(dir)) : FileStat{};
    if (directory_may_vouch(now, start_ns)) {
      stamps.push_back({std::string(dir), now.inode, now.device, now.mtime_ns, now.ctime_ns});
    }
  }
  std::sort(stamps.begin(), stamps.end(),
            [](const DirectoryStamp& a, const DirectoryStamp& b) { return a.path < b.path; });
  return stamps;
}

}  // namespace nvfresh
