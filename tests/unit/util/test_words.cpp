#include "util/words.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

using Words = std::vector<std::string>;

TEST_CASE("split_words with the shell's quotes groups and removes both quotes", "[words]")
{
  CHECK(split_words(R"(a "b c" 'd e' f\ g -L"/x y")", k_shell_quotes) ==
        std::vector<std::string>{"a", "b c", "d e", "f g", "-L/x y"});
  CHECK(split_words("  ", k_shell_quotes).empty());
}

TEST_CASE("split_words: the three rules differ in quotes and backslashes", "[words]")
{
  const std::string text = R"(-DA="x y" 'p q' a\ b "c\"d")";
  CHECK(split_words(text, k_shell_quotes) == Words{"-DA=x y", "p q", "a b", "c\"d"});
  CHECK(split_words(text, k_nvcc_options_file_quotes) ==
        Words{"-DA=x y", "'p", "q'", "a b", "c\"d"});
  CHECK(split_words(text, k_nvcc_env_flags_quotes) ==
        Words{"-DA=\"x y\"", "'p", "q'", "a\\", "b", "\"c\\\"d\""});
}

TEST_CASE("split_words: any whitespace separates, an unclosed quote runs to the end", "[words]")
{
  CHECK(split_words("a\tb\r\nc\fd\ve", k_shell_quotes) == Words{"a", "b", "c", "d", "e"});
  CHECK(split_words("a \"b c", k_shell_quotes) == Words{"a", "b c"});
  CHECK(split_words("", k_nvcc_env_flags_quotes).empty());
}
