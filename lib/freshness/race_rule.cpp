#include "freshness/race_rule.hpp"

#include "util/clock.hpp"

namespace nvfresh {

bool changed_since(const FileStat& stat, std::int64_t start_ns)
{
  return stat.ctime_ns >= start_ns || (stat.mtime_ns >= start_ns && stat.mtime_ns <= now_ns());
}

}  // namespace nvfresh
