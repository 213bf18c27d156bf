// What a short-lived command holds at its end is left to the process's end instead of being torn
// down: freeing a 10k-object tree's proof (a million strings) cost a tenth of check's and sync's
// time, and a served cache hit's entry, manifest and record (tens of thousands of strings) a tenth
// of the hit's.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace nvfresh {

// Moves `value` where it lives until the process ends, and returns it there. Reachable from a
// static that is never destroyed, so LeakSanitizer does not report it (that would turn an exit
// status into 1). For values a command is done with, or reads until it ends: each call keeps one
// more, so not for a loop.
template <class T>
std::decay_t<T>& keep_until_exit(T&& value)
{
  using Kept = std::decay_t<T>;
  static auto* kept = new std::vector<std::unique_ptr<Kept>>();  // never destroyed, by design
  kept->push_back(std::make_unique<Kept>(std::forward<T>(value)));
  return *kept->back();
}

}  // namespace nvfresh
