// The race rule: a file whose ctime (or a plausible mtime) is at or after a compile's start may
// have been written while the compile read it, so the compile cannot vouch for its content.
#pragma once

#include "util/file_io.hpp"

#include <cstdint>

namespace nvfresh {

// A write at or after start_ns stamps ctime (and mtime) with a time >= start_ns. An mtime beyond
// the present was set on purpose (touch -d, tar x, a skewed clock), not by a write during the
// compile: ctime alone tells then, else such a file would make every compile look raced.
bool changed_since(const FileStat& stat, std::int64_t start_ns);

}  // namespace nvfresh
