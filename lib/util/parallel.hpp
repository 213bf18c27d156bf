// Running one piece of work per index on several threads, for the few places that fan out over
// thousands of files (stats and hashes ahead of a check, reading a tree's records).
#pragma once

#include <cstddef>
#include <functional>

namespace nvfresh {

// Runs work(i) once for every i below `count`, on one thread per `per_thread` items, at most
// `max_threads` and no more than the cores; this thread works too. Items are taken from a shared
// counter in runs of per_thread / 16 (one by one for per_thread below 32), so uneven items spread
// out, and threads neither contend for the counter on every item nor write results next to one
// another's (a stat takes about a microsecond). When no thread can be started, this thread does
// all of it. work must be safe to run concurrently for different i.
void for_each_index_on_threads(std::size_t count, std::size_t per_thread, std::size_t max_threads,
                               const std::function<void(std::size_t)>& work);

}  // namespace nvfresh
