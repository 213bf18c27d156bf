// Splitting a text into command words, the one splitter of nvfresh, by the quoting rules of who
// reads the text: /bin/sh (CMake's link lines, response files, -Xcompiler words), nvcc's options
// files, or NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS (each measured against nvcc 13.0).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

struct QuoteRules {
  bool keep_double_quotes = false;   // "a b" stays one word, with its quotes
  bool single_quotes_group = false;  // 'a b' is one word, without its quotes
  bool backslash_escapes = true;     // outside quotes \x is x; inside "…" \" and \\ are " and '\'
};

// /bin/sh: double and single quotes group and are removed; a backslash escapes.
inline constexpr QuoteRules k_shell_quotes{false, true, true};
// nvcc's --options-file: double quotes group and are removed; a backslash escapes; single quotes are
// ordinary characters (nvcc rejects "-DQ='a b'" in an options file).
inline constexpr QuoteRules k_nvcc_options_file_quotes{false, false, true};
// NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS: double quotes group and stay in the word; backslashes and
// single quotes are ordinary characters.
inline constexpr QuoteRules k_nvcc_env_flags_quotes{true, false, false};

// Whitespace (space, tab, newline, CR, FF, VT) separates words outside quotes.
std::vector<std::string> split_words(std::string_view text, QuoteRules rules);

}  // namespace nvfresh
