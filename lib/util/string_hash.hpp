// Hash maps and sets keyed by paths and other strings, hashed with XXH3-64 instead of the
// standard library's hash: a skip of a CUTLASS TU looks each of its 1061 input paths up six times
// (stat memo, seeds, the check's tables), and std::hash's byte loop was 8% of its instructions.
// Lookups take a std::string_view or a std::string alike (transparent), without a copy.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace nvfresh {

struct StringHash {
  using is_transparent = void;
  // Not noexcept on purpose: libstdc++ then keeps each node's hash (as it does for std::hash of a
  // string), so a bucket's chain is walked by comparing stored hashes, not by hashing every node
  // again (17k hashes for a skip's 6k lookups when it did).
  std::size_t operator()(std::string_view text) const;
};

template <typename Value>
using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

template <typename Value>
using StringViewMap = std::unordered_map<std::string_view, Value, StringHash, std::equal_to<>>;

using StringViewSet = std::unordered_set<std::string_view, StringHash, std::equal_to<>>;

}  // namespace nvfresh
