#include "cache/front_end_builtins.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("front_end_builtins: a builtin that reads where it is written is named")
{
  CHECK(builtin_reading_position("int l = __builtin_LINE();") == "__builtin_LINE");
  CHECK(builtin_reading_position("x = __builtin_COLUMN();") == "__builtin_COLUMN");
  CHECK(builtin_reading_position("f(__builtin_FILE())") == "__builtin_FILE");
  CHECK(builtin_reading_position("f(__builtin_FILE_NAME())") == "__builtin_FILE_NAME");
  CHECK(builtin_reading_position("f(__builtin_FUNCTION())") == "__builtin_FUNCTION");
  // std::source_location::current()'s default argument in libstdc++'s <source_location>.
  CHECK(builtin_reading_position("static consteval source_location current(const void* __p = "
                                 "__builtin_source_location()) noexcept") ==
        "__builtin_source_location");
  CHECK(is_position_builtin("__builtin_LINE"));
  CHECK_FALSE(is_position_builtin("__builtin_expect"));
  CHECK_FALSE(is_position_builtin("LINE"));
}

TEST_CASE("front_end_builtins: builtins that compute from their operands pass, unknown ones do not")
{
  CHECK(builtin_reading_position("if (__builtin_expect(x, 0)) __builtin_unreachable();").empty());
  CHECK(builtin_reading_position("y = __builtin_sqrtf(x) + __builtin_fabsl(z);").empty());
  CHECK(
    builtin_reading_position("n = __builtin_popcountll(m); __builtin_memcpy(a, b, 4);").empty());
  CHECK(builtin_reading_position("if (__builtin_is_constant_evaluated()) {}").empty());
  CHECK(builtin_reading_position("no builtin here: __builtin").empty());
  // glibc's <strings.h> under -O2, and x86's SIMD headers, in host code cicc parses.
  CHECK(builtin_reading_position("return __builtin_index(s, c) + __builtin_rindex(s, c);").empty());
  CHECK(builtin_reading_position("__builtin_ia32_pause(); __builtin_ia32_addps(a, b);").empty());
  // Not known: refused, whatever it does (a new compiler's builtin).
  CHECK(builtin_reading_position("x = __builtin_something_new(1);") == "__builtin_something_new");
  // Part of a longer identifier: not a builtin.
  CHECK(builtin_reading_position("int my__builtin_LINE = 3;").empty());
  // The first one that may read the position, past ones that cannot, and before unknown ones.
  CHECK(builtin_reading_position("__builtin_expect(a, 1); __builtin_LINE(); __builtin_COLUMN();") ==
        "__builtin_LINE");
  CHECK(
    builtin_reading_position("using __builtin_ret_type = decltype(__builtin_source_location());") ==
    "__builtin_source_location");
}
