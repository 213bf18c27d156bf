#include "cache/front_end_builtins.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>

namespace nvfresh {

namespace {

constexpr std::string_view k_prefix = "__builtin_";

// Answered from where the call is written (GCC, Clang and EDG spell them alike).
constexpr std::array<std::string_view, 6> k_position_builtins = {
  "LINE", "COLUMN", "FILE", "FILE_NAME", "FUNCTION", "source_location"};

// C library math functions: each is a builtin as it is, and with the suffixes f and l.
constexpr std::string_view k_math_families[] = {
  "acos",        "acosh",      "asin",      "asinh", "atan",    "atan2",     "atanh",
  "cbrt",        "ceil",       "copysign",  "cos",   "cosh",    "erf",       "erfc",
  "exp",         "exp10",      "exp2",      "expm1", "fabs",    "fdim",      "floor",
  "fma",         "fmax",       "fmin",      "fmod",  "frexp",   "gamma",     "huge_val",
  "hypot",       "ilogb",      "inf",       "j0",    "j1",      "jn",        "ldexp",
  "lgamma",      "llrint",     "llround",   "log",   "log10",   "log1p",     "log2",
  "logb",        "lrint",      "lround",    "modf",  "nan",     "nans",      "nearbyint",
  "nextafter",   "nexttoward", "pow",       "pow10", "powi",    "remainder", "remquo",
  "rint",        "round",      "roundeven", "scalb", "scalbln", "scalbn",    "signbit",
  "significand", "sin",        "sincos",    "sinh",  "sqrt",    "tan",       "tanh",
  "tgamma",      "trunc",      "y0",        "y1"};

// Builtins that compute from their operands or types only: bits, overflow, memory and strings,
// classification, type traits, allocation, varargs, control, vectors.
// A table, packed by hand.
// clang-format off
constexpr std::string_view k_operand_builtins[] = {
  "abort", "abs", "add_overflow", "add_overflow_p", "addressof", "aligned_alloc", "alloca",
  "alloca_with_align", "assume", "assume_aligned", "bit_cast", "bswap128", "bswap16", "bswap32",
  "bswap64", "calloc", "char_memchr", "choose_expr", "classify_type", "clear_padding", "clrsb",
  "clrsbl", "clrsbll", "clz", "clzg", "clzl", "clzll", "complex", "constant_p", "convertvector",
  "ctz", "ctzg", "ctzl", "ctzll", "dynamic_object_size", "exit", "expect",
  "expect_with_probability", "extract_return_addr", "ffs", "ffsl", "ffsll", "fpclassify", "free",
  "frame_address", "has_attribute", "imaxabs", "is_constant_evaluated", "is_corresponding_member",
  "is_pointer_interconvertible_with_class", "isfinite", "isgreater", "isgreaterequal", "isinf",
  "isinf_sign", "isless", "islessequal", "islessgreater", "isnan", "isnormal", "issignaling",
  "isunordered", "labs", "launder", "llabs", "malloc", "memchr", "memcmp", "memcpy",
  "memcpy_inline", "memmove", "mempcpy", "memset", "memset_inline", "mul_overflow",
  "mul_overflow_p", "new_allocator", "new_deleter", "object_size", "offsetof", "operator_delete",
  "operator_new", "parity", "parityl", "parityll", "popcount", "popcountg", "popcountl",
  "popcountll", "prefetch", "printf", "puts", "putchar", "realloc", "return_address", "shuffle",
  "shufflevector", "snprintf", "speculation_safe_value", "sprintf", "stpcpy", "strcat", "strchr",
  "strcmp", "strcpy", "strcspn", "strlen", "strncat", "strncmp", "strncpy", "strpbrk", "strrchr",
  "strspn", "strstr", "sub_overflow", "sub_overflow_p", "trap", "types_compatible_p", "unreachable",
  "va_arg", "va_arg_pack", "va_arg_pack_len", "va_copy", "va_end", "va_list", "va_start",
  "vsnprintf", "vsprintf", "wcslen", "wmemchr", "wmemcmp",
  // glibc's <strings.h> and <stdio.h> with optimization on
  "index", "rindex", "bcmp", "bcopy", "bzero", "memrchr", "rawmemchr", "strnlen", "strdup",
  "strndup", "stpncpy", "strcasecmp", "strncasecmp", "fprintf", "fputs", "fwrite", "vfprintf",
  "vprintf", "scanf", "sscanf", "fscanf"};
// clang-format on

// Families of target builtins, each computing from its operands (x86's SIMD and system ones,
// which glibc's and GCC's headers call in host code).
constexpr std::string_view k_operand_families[] = {"ia32_"};

bool is_identifier_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

const std::set<std::string, std::less<>>& known_operand_builtins()
{
  static const std::set<std::string, std::less<>> known = [] {
    std::set<std::string, std::less<>> names(std::begin(k_operand_builtins),
                                             std::end(k_operand_builtins));
    for (std::string_view base : k_math_families) {
      for (std::string_view suffix : {"", "f", "l"}) {
        names.insert(std::string(base) + std::string(suffix));
      }
    }
    return names;
  }();
  return known;
}

}  // namespace

bool is_position_builtin(std::string_view name)
{
  if (!name.starts_with(k_prefix)) {
    return false;
  }
  name.remove_prefix(k_prefix.size());
  return std::find(k_position_builtins.begin(), k_position_builtins.end(), name) !=
         k_position_builtins.end();
}

std::string_view builtin_reading_position(std::string_view code)
{
  std::string_view unknown;
  for (size_t at = code.find(k_prefix); at != std::string_view::npos;
       at = code.find(k_prefix, at + 1)) {
    if (at > 0 && is_identifier_char(code[at - 1])) {
      continue;
    }
    size_t end = at + k_prefix.size();
    while (end < code.size() && is_identifier_char(code[end])) {
      ++end;
    }
    const std::string_view name = code.substr(at, end - at);
    if (is_position_builtin(name)) {
      return name;
    }
    const std::string_view rest = name.substr(k_prefix.size());
    const bool in_family =
      std::any_of(std::begin(k_operand_families), std::end(k_operand_families),
                  [&](std::string_view family) { return rest.starts_with(family); });
    if (unknown.empty() && !in_family && !known_operand_builtins().contains(rest)) {
      unknown = name;  // libstdc++'s <source_location> names a type __builtin_ret_type
    }
  }
  return unknown;
}

}  // namespace nvfresh
