// Tab-separated text fields with a minimal escape: '\\' -> "\\\\", TAB -> "\\t", LF -> "\\n",
// CR -> "\\r". Used by nvfresh's line-oriented files (records, the events log).
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvfresh {

std::string escape_field(std::string_view text);
void append_escaped_field(std::string& out, std::string_view text);  // out += escape_field(text)
std::optional<std::string> unescape_field(std::string_view text);    // nullopt on a bad escape

// A whole field as a decimal number: false when it is empty, has anything else in it, or overflows.
template <typename Number>
bool parse_number(std::string_view text, Number& value)
{
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// Splits one line at TABs and unescapes every field; nullopt when a field has a bad escape.
std::optional<std::vector<std::string>> split_fields(std::string_view line);
// The same into `fields`, whose strings are reused (their capacity kept); false on a bad escape.
bool split_fields_into(std::string_view line, std::vector<std::string>& fields);

}  // namespace nvfresh
