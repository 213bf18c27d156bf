#include "util/text_fields.hpp"

#include <algorithm>

namespace nvfresh {

void append_escaped_field(std::string& out, std::string_view text)
{
  auto plain = [](char c) { return c != '\\' && c != '\t' && c != '\n' && c != '\r'; };
  if (std::all_of(text.begin(), text.end(), plain)) {
    out += text;  // the common case: nothing to escape, one copy
    return;
  }
  out += escape_field(text);
}

std::string escape_field(std::string_view text)
{
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '\\': escaped += "\\\\"; break;
    case '\t': escaped += "\\t"; break;
    case '\n': escaped += "\\n"; break;
    case '\r': escaped += "\\r"; break;
    default: escaped += c;
    }
  }
  return escaped;
}

std::optional<std::string> unescape_field(std::string_view text)
{
  if (text.find('\\') == std::string_view::npos) {
    return std::string(text);  // the common case: nothing escaped, one copy
  }
  std::string plain;
  plain.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      plain += text[i];
      continue;
    }
    if (++i == text.size()) {
      return std::nullopt;
    }
    switch (text[i]) {
    case '\\': plain += '\\'; break;
    case 't': plain += '\t'; break;
    case 'n': plain += '\n'; break;
    case 'r': plain += '\r'; break;
    default: return std::nullopt;
    }
  }
  return plain;
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
