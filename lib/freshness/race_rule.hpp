// The race rule: a file whose ctime (or a plausible mtime) is at or after a compile's start may
// have been written while the compile read it, so the compile cannot vouch for its content.
#pragma once

#include "record/record.hpp"
#include "util/file_io.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfresh {

// A write at or after start_ns stamps ctime (and mtime) with a time >= start_ns. An mtime beyond
// the present was set on purpose (touch -d, tar x, a skewed clock), not by a write during the
// compile: ctime alone tells then, else such a file would make every compile look raced.
bool changed_since(const FileStat& stat, std::int64_t start_ns);

// The race rule for inputs looked at after start_ns, a coarse-clock time read without waiting for
// its next tick (the cache lookup's: a compile's start waits, race_guard_start_ns, and its reads
// take seconds; a lookup's take milliseconds). The first input that may have been written since it
// was looked at; nullopt when none was.
//   - A stamp (size, mtime, ctime, inode) that is not the recorded one: written since.
//   - A ctime at or after start_ns: written just before the lookup, or while it read the file, and
//     a same-size rewrite in that clock tick keeps the stamp. Once the coarse clock is past that
//     ctime (waited for, 50 ms at most; any later write stamps a later ctime, whatever mtime it
//     sets), its content is read again: only the recorded hash clears it.
// Such suspects are rare (a header generated a moment before), so the rule rarely waits.
std::optional<std::string> first_input_written_since(const std::vector<RecordedInput>& inputs,
                                                     std::int64_t start_ns);

}  // namespace nvfresh
