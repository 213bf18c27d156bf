#include "freshness/race_rule.hpp"

#include "util/clock.hpp"
#include "util/hasher.hpp"

#include <algorithm>

namespace nvfresh {

bool changed_since(const FileStat& stat, std::int64_t start_ns)
{
  return stat.ctime_ns >= start_ns || (stat.mtime_ns >= start_ns && stat.mtime_ns <= now_ns());
}

namespace {

bool moved_since(const FileStat& now, const FileFingerprint& recorded)
{
  return !now.exists || now.mtime_ns != recorded.mtime_ns || now.ctime_ns != recorded.ctime_ns ||
         now.size != recorded.size || now.inode != recorded.inode;
}

}  // namespace

std::optional<std::string> first_input_written_since(const std::vector<RecordedInput>& inputs,
                                                     std::int64_t start_ns)
{
  std::vector<const FileFingerprint*> suspects;
  std::int64_t latest_ctime = start_ns;
  for (const auto& input : inputs) {
    const FileStat now = stat_file(input.file.path);
    if (moved_since(now, input.file)) {
      return input.file.path;
    }
    if (changed_since(now, start_ns)) {
      suspects.push_back(&input.file);
      latest_ctime = std::max(latest_ctime, now.ctime_ns);
    }
  }
  if (suspects.empty()) {
    return std::nullopt;
  }
  if (wait_for_coarse_after(latest_ctime) <= latest_ctime) {
    return suspects.front()->path;  // the clock did not move on: nothing proves the content
  }
  for (const FileFingerprint* suspect : suspects) {
    const std::optional<Digest> content = hash_file(suspect->path);
    if (!content || *content != suspect->hash || moved_since(stat_file(suspect->path), *suspect)) {
      return suspect->path;
    }
  }
  return std::nullopt;
}

}  // namespace nvfresh
