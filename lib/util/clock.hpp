// The clocks nvfresh compares file timestamps with. File systems stamp files with CLOCK_REALTIME
// (coarse-grained on most kernels); every time nvfresh stores or compares is in nanoseconds since
// the epoch on that clock.
#pragma once

#include <cstdint>

namespace nvfresh {

std::int64_t now_ns();         // CLOCK_REALTIME
std::int64_t coarse_now_ns();  // CLOCK_REALTIME_COARSE: what a file written now gets stamped with
// CLOCK_MONOTONIC: the clock the tracer times a compile's programs with (lib/trace/trace.cpp's T
// lines), one for every process of the machine; never a file's time
std::int64_t monotonic_now_ns();

// The start of a compile for the race guard: a CLOCK_REALTIME_COARSE time later than every
// timestamp a file got before this call, so that only a write after it counts as "during the
// compile". File systems stamp files with the coarse clock, but with multigrain timestamps (Linux
// 6.13+) a file whose times were read since its last change gets the fine clock, up to a tick
// ahead of the coarse one: with coarse_now_ns() alone, a header saved a moment before the compile
// made it "raced" (and the next build compiled again). Waits for the next tick (1-10 ms; 50 ms at
// most, then the coarse time as it is).
std::int64_t race_guard_start_ns();

// Waits until the coarse clock is past `ns` (50 ms at most) and returns it: from then on, a write
// stamps a file with a time after `ns`.
std::int64_t wait_for_coarse_after(std::int64_t ns);

inline constexpr std::int64_t k_one_second_ns = 1'000'000'000;

}  // namespace nvfresh
