#include "freshness/race_rule.hpp"

#include "util/batch_stat.hpp"
#include "util/clock.hpp"
#include "util/hasher.hpp"
#include "util/log.hpp"

#include <algorithm>

namespace nvfresh {

bool changed_since(const FileStat& stat, std::int64_t start_ns)
{
  return stat.ctime_ns >= start_ns || (stat.mtime_ns >= start_ns && stat.mtime_ns <= now_ns());
}

std::optional<std::string> first_input_written_since(const std::vector<RecordedInput>& inputs,
                                                     std::int64_t start_ns)
{
  std::vector<const std::string*> paths;
  paths.reserve(inputs.size());
  for (const auto& input : inputs) {
    paths.push_back(&input.file.path);
  }
  const std::vector<FileStat> stats = stat_files(paths);
  std::vector<const FileFingerprint*> suspects;
  std::int64_t latest_ctime = start_ns;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const RecordedInput& input = inputs[i];
    const FileStat& now = stats[i];
    if (!input.file.same_stamp_as(now)) {
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
  log::info("race rule: {} of {} inputs stamped at or after {} (first: {}): waiting for the clock",
            suspects.size(), inputs.size(), start_ns, suspects.front()->path);
  if (wait_for_coarse_after(latest_ctime) <= latest_ctime) {
    return suspects.front()->path;  // the clock did not move on: nothing proves the content
  }
  for (const FileFingerprint* suspect : suspects) {
    const std::optional<Digest> content = hash_file(suspect->path);
    if (!content || *content != suspect->hash ||
        !suspect->same_stamp_as(stat_file(suspect->path))) {
      return suspect->path;
    }
  }
  return std::nullopt;
}

}  // namespace nvfresh
