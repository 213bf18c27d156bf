// The front end's builtins as the step cache's moved-lines rule (cache/line_layout.hpp) sees them.
// That rule keys cicc on its input's code without line numbers, which is sound only where the
// presumed position (file, line, column) reaches cicc's outputs through line markers and local
// variables' names alone. A builtin such as __builtin_LINE() is a third channel: the front end
// answers it from where the call is written (also as a default argument: std::source_location's
// current() is __builtin_source_location()), so the same code at another line gives another PTX.
//
// The list is an allow list: builtins known to compute from their operands only (GCC's and EDG's
// library, math, bit, overflow, type-trait and memory builtins). A name outside it is not known
// to ignore the position, and refuses the rule as the position builtins do. The list only decides
// which inputs get the moved-lines rule: a missing name costs a cicc run, never a wrong object.
// Pure text work.
#pragma once

#include <string_view>

namespace nvfresh {

// A `__builtin_<name>` in `code` that may read the position where it is written: the first
// position builtin, else the first name this list does not know (a type libstdc++ names
// __builtin_ret_type included); "" when there is none. Names inside longer identifiers
// (`my__builtin_LINE`) are not builtins.
std::string_view builtin_reading_position(std::string_view code);

// Whether `name` (`__builtin_…`) is one the front end answers from the position it is written at:
// __builtin_LINE, __builtin_COLUMN, __builtin_FILE, __builtin_FILE_NAME, __builtin_FUNCTION,
// __builtin_source_location.
bool is_position_builtin(std::string_view name);

}  // namespace nvfresh
