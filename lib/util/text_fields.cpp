#include "util/text_fields.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nvfresh {

namespace {

// Whether `text` holds a byte that needs an escape, eight bytes at a time: for each of the four,
// a word whose bytes are the text's xor that byte has a zero byte exactly where the text has it,
// and (w - 0x01..01) & ~w & 0x80..80 is non-zero exactly when w has a zero byte. A record's text
// is mostly paths without any of the four, and a byte-by-byte test was most of writing it.
bool has_byte_to_escape(std::string_view text)
{
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
  constexpr std::uint64_t k_highs = 0x8080808080808080ULL;
  auto has_zero_byte = [](std::uint64_t word) { return ((word - k_ones) & ~word & k_highs) != 0; };
  size_t at = 0;
  for (; at + sizeof(std::uint64_t) <= text.size(); at += sizeof(std::uint64_t)) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + at, sizeof word);
    if (has_zero_byte(word ^ (k_ones * '\\')) || has_zero_byte(word ^ (k_ones * '\t')) ||
        has_zero_byte(word ^ (k_ones * '\n')) || has_zero_byte(word ^ (k_ones * '\r'))) {
      return true;
    }
  }
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
      return true;
    }
  }
  return false;
}

}  // namespace

void append_escaped_field(std::string& out, std::string_view text)
{
  if (!has_byte_to_escape(text)) {
    out += text;  // the common case: nothing to escape, one copy
    return;
  }
  out += escape_field(text);
}

namespace {

bool needs_escape(char c)
{
  return c == '\\' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

// Both directions copy the plain runs between escapes in one go: a cache entry holds a whole
// object (megabytes of any bytes) as one field, and a byte-by-byte copy made it most of a hit.
std::string escape_field(std::string_view text)
{
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 16);
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = begin;
    while (end < text.size() && !needs_escape(text[end])) {
      ++end;
    }
    escaped.append(text.data() + begin, end - begin);
    if (end == text.size()) {
      break;
    }
    switch (text[end]) {
    case '\\': escaped += "\\\\"; break;
    case '\t': escaped += "\\t"; break;
    case '\n': escaped += "\\n"; break;
    default: escaped += "\\r"; break;
    }
    begin = end + 1;
  }
  return escaped;
}

std::optional<std::string> unescape_field(std::string_view text)
{
  size_t slash = text.find('\\');
  if (slash == std::string_view::npos) {
    return std::string(text);  // the common case: nothing escaped, one copy
  }
  std::string plain;
  plain.reserve(text.size());
  size_t begin = 0;
  while (slash != std::string_view::npos) {
    plain.append(text.data() + begin, slash - begin);
    if (slash + 1 == text.size()) {
      return std::nullopt;
    }
    switch (text[slash + 1]) {
    case '\\': plain += '\\'; break;
    case 't': plain += '\t'; break;
    case 'n': plain += '\n'; break;
    case 'r': plain += '\r'; break;
    default: return std::nullopt;
    }
    begin = slash + 2;
    slash = text.find('\\', begin);
  }
  plain.append(text.data() + begin, text.size() - begin);
  return plain;
}

bool split_fields_into(std::string_view line, std::vector<std::string>& fields)
{
  size_t count = 0;
  size_t begin = 0;
  while (begin <= line.size()) {
    const size_t end = std::min(line.find('\t', begin), line.size());
    const std::string_view text = line.substr(begin, end - begin);
    if (count == fields.size()) {
      fields.emplace_back();
    }
    std::string& field = fields[count++];
    if (text.find('\\') == std::string_view::npos) {
      field.assign(text);  // the common case: nothing escaped, the string's capacity reused
    } else if (auto plain = unescape_field(text)) {
      field = std::move(*plain);
    } else {
      fields.resize(count);
      return false;
    }
    begin = end + 1;
  }
  fields.resize(count);
  return true;
}

std::optional<std::vector<std::string>> split_fields(std::string_view line)
{
  std::vector<std::string> fields;
  size_t begin = 0;
  while (begin <= line.size()) {
    size_t end = std::min(line.find('\t', begin), line.size());
    auto field = unescape_field(line.substr(begin, end - begin));
    if (!field) {
      return std::nullopt;
    }
    fields.push_back(std::move(*field));
    begin = end + 1;
  }
  return fields;
}

}  // namespace nvfresh
