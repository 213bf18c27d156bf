// Local wall-clock time of a nanosecond timestamp, for people to read.
#pragma once

#include <cstdint>
#include <string>

namespace nvfresh {

// "2026-11-30 08:10:29" (with_date) or "08:10:29.123".
std::string format_local_time(std::int64_t time_ns, bool with_date);

}  // namespace nvfresh
