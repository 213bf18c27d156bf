#include "util/text_fields.hpp"

#include <catch2/catch.hpp>

#include <string>

using nvfresh::append_escaped_field;
using nvfresh::escape_field;
using nvfresh::unescape_field;

TEST_CASE("escape_field writes the four escapes and copies every other byte", "[text_fields]")
{
  CHECK(escape_field("plain") == "plain");
  CHECK(escape_field("a\\b\tc\nd\re") == "a\\\\b\\tc\\nd\\re");
  CHECK(escape_field("\n\n") == "\\n\\n");
  CHECK(escape_field("") == "");
  CHECK(escape_field(std::string("a\0b", 3)) == std::string("a\0b", 3));
}

TEST_CASE("append_escaped_field finds a byte to escape wherever it stands, and no other",
          "[text_fields]")
{
  // Eight bytes at a time: each of the four at every offset of texts up to three words long, and
  // the bytes beside them (and high bytes, whose borrow the zero-byte test must not mistake).
  for (size_t length = 0; length <= 24; ++length) {
    for (const char filler : {'a', '\x08', '\x0b', '\x0c', '\x0e', '[', ']', '\x80', '\xff'}) {
      const std::string plain(length, filler);
      std::string out = "prefix:";
      append_escaped_field(out, plain);
      CHECK(out == "prefix:" + plain);
      for (size_t at = 0; at < length; ++at) {
        for (const char special : {'\\', '\t', '\n', '\r'}) {
          std::string text = plain;
          text[at] = special;
          std::string escaped;
          append_escaped_field(escaped, text);
          CHECK(escaped == escape_field(text));
          CHECK(escaped.size() == text.size() + 1);
        }
      }
    }
  }
}

TEST_CASE("unescape_field reads back what escape_field wrote, any bytes", "[text_fields]")
{
  std::string every_byte;
  for (int i = 0; i < 256; ++i) {
    every_byte += static_cast<char>(i);
  }
  std::string object;  // an object's bytes: long plain runs with escapes between them
  for (int i = 0; i < 5000; ++i) {
    object += every_byte.substr(static_cast<size_t>(i % 256), static_cast<size_t>(i % 97));
  }
  for (const std::string& text : {every_byte, object, std::string("\\\\"), std::string("x\\")}) {
    auto back = unescape_field(escape_field(text));
    REQUIRE(back);
    CHECK(*back == text);
  }
  CHECK(unescape_field("a\\tb") == std::optional<std::string>("a\tb"));
  CHECK(unescape_field("end\\n") == std::optional<std::string>("end\n"));
}

TEST_CASE("unescape_field refuses a bad escape or a lone backslash at the end", "[text_fields]")
{
  CHECK_FALSE(unescape_field("a\\x"));
  CHECK_FALSE(unescape_field("trailing\\"));
  CHECK_FALSE(unescape_field("\\"));
  CHECK_FALSE(unescape_field("ok\\\\then\\q"));
}
