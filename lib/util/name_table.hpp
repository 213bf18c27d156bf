// Lookups in the small constexpr tables that give enums their stable names ("not-recorded",
// "input_changed", ...): one spelling for "the row whose field is this value".
#pragma once

#include <cstddef>

namespace nvfresh {

// The first row of `rows` whose `field` equals `value`, or nullptr.
template <typename Row, std::size_t N, typename Field, typename Value>
const Row* find_row(const Row (&rows)[N], Field Row::*field, const Value& value)
{
  for (const Row& row : rows) {
    if (row.*field == value) {
      return &row;
    }
  }
  return nullptr;
}

}  // namespace nvfresh
