#include "cache/code_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace nvfresh {

namespace {

constexpr std::string_view k_code_text_format = "code-text 1";

bool is_blank(char c)
{
  return c == ' ' || c == '\t';
}

bool is_identifier_char(char c)
{
  const auto byte = static_cast<unsigned char>(c);
  return std::isalnum(byte) != 0 || c == '_' || c == '$' || byte >= 0x80;
}

bool is_digit(char c)
{
  return c >= '0' && c <= '9';
}

// A line splice at `at`: a backslash, blanks (GCC takes them, with a warning), a newline. Its
// length, or 0.
size_t splice_length(std::string_view in, size_t at)
{
  if (at >= in.size() || in[at] != '\\') {
    return 0;
  }
  size_t k = at + 1;
  while (k < in.size() && is_blank(in[k])) {
    ++k;
  }
  return k < in.size() && in[k] == '\n' ? k + 1 - at : 0;
}

// Whether `text` is only blanks, line splices and block comments.
bool only_gaps(std::string_view text)
{
  size_t i = 0;
  while (i < text.size()) {
    if (is_blank(text[i])) {
      ++i;
    } else if (size_t splice = splice_length(text, i)) {
      i += splice;
    } else if (text.substr(i, 2) == "/*") {
      const size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) {
        return false;
      }
      i = end + 2;
    } else {
      return false;
    }
  }
  return true;
}

// After `text` (a logical line so far), does a '<' open a header name? In an #include-like
// directive with nothing but gaps between, and right after "__has_include(" and its kin.
bool header_name_follows(std::string_view text)
{
  size_t start = 0;
  while (start < text.size()) {
    const size_t gap = is_blank(text[start]) ? 1 : splice_length(text, start);
    if (gap == 0) {
      break;
    }
    start += gap;
  }
  std::string_view rest = text.substr(start);
  if (rest.starts_with('#') || rest.starts_with("%:")) {
    rest.remove_prefix(rest.starts_with('#') ? 1 : 2);
    size_t name = 0;
    while (name < rest.size() && !is_identifier_char(rest[name])) {
      ++name;
    }
    if (!only_gaps(rest.substr(0, name))) {
      return false;
    }
    size_t end = name;
    while (end < rest.size() && is_identifier_char(rest[end])) {
      ++end;
    }
    const std::string_view directive = rest.substr(name, end - name);
    constexpr std::array<std::string_view, 4> k_with_header_name = {"include", "include_next",
                                                                    "import", "embed"};
    if (std::find(k_with_header_name.begin(), k_with_header_name.end(), directive) !=
          k_with_header_name.end() &&
        only_gaps(rest.substr(end))) {
      return true;
    }
  }
  const size_t open = text.rfind('(');
  if (open == std::string_view::npos || !only_gaps(text.substr(open + 1))) {
    return false;
  }
  size_t end = open;
  while (end > 0 && !is_identifier_char(text[end - 1])) {
    --end;
  }
  size_t begin = end;
  while (begin > 0 && is_identifier_char(text[begin - 1])) {
    --begin;
  }
  const std::string_view name = text.substr(begin, end - begin);
  return (name == "__has_include" || name == "__has_include_next" || name == "__has_embed") &&
         only_gaps(text.substr(end, open - end));
}

bool mentions_fallthrough(std::string_view comment)
{
  std::string lower(comment);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("fall") != std::string::npos;
}

// Whether the compiler reads this comment: GCC's -Wimplicit-fallthrough takes "falls through"
// comments for the attribute; its -Wbidi-chars (on by default) warns about Unicode bidirectional
// controls in comments (U+202A-U+202E, U+2066-U+2069, and with =any U+200E, U+200F, U+061C).
bool compiler_reads(std::string_view comment)
{
  for (size_t at = comment.find('\xE2'); at != std::string_view::npos && at + 2 < comment.size();
       at = comment.find('\xE2', at + 1)) {
    const auto second = static_cast<unsigned char>(comment[at + 1]);
    const auto third = static_cast<unsigned char>(comment[at + 2]);
    if ((second == 0x80 && ((third >= 0xAA && third <= 0xAE) || third == 0x8E || third == 0x8F)) ||
        (second == 0x81 && third >= 0xA6 && third <= 0xA9)) {
      return true;
    }
  }
  return comment.find("\xD8\x9C") != std::string_view::npos || mentions_fallthrough(comment);
}

bool holds_trigraph(std::string_view text)
{
  for (size_t at = text.find("??"); at != std::string_view::npos; at = text.find("??", at + 1)) {
    if (at + 2 < text.size() &&
        std::string_view("=/'()!<>-").find(text[at + 2]) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

class CodeLexer {
public:
  explicit CodeLexer(std::string_view in) : m_in(in) { m_out.reserve(in.size()); }

  std::optional<std::string> run()
  {
    while (m_at < m_in.size()) {
      if (!step()) {
        return std::nullopt;
      }
    }
    end_line();
    while (m_out.size() >= 2 && m_out.ends_with("\n\n")) {
      m_out.pop_back();
    }
    return std::move(m_out);
  }

private:
  std::string_view m_in;
  size_t m_at = 0;
  std::string m_out;
  size_t m_line_start = 0;          // in m_out: where the current physical line begins
  size_t m_logical_line_start = 0;  // in m_out: where the current line, splices joined, begins

  bool step()
  {
    const char c = m_in[m_at];
    if (c == '\n') {
      newline();
      ++m_at;
      return true;
    }
    if (size_t splice = splice_length(m_in, m_at)) {
      return splice_in_code(splice);
    }
    if (c == '/' && peek(1) == '/') {
      return line_comment();
    }
    if (c == '/' && peek(1) == '*') {
      return block_comment();
    }
    if (c == '"' || c == '\'') {
      return quoted(c);
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      number();
      return true;
    }
    if (is_identifier_char(c)) {
      return identifier();
    }
    if (c == '<' && header_name_follows(std::string_view(m_out).substr(m_logical_line_start))) {
      return header_name();
    }
    m_out += c;
    ++m_at;
    return true;
  }

  char peek(size_t ahead) const { return m_at + ahead < m_in.size() ? m_in[m_at + ahead] : '\0'; }

  // Where the current line's text ends without its trailing blanks.
  size_t end_without_blanks() const
  {
    size_t end = m_out.size();
    while (end > m_line_start && is_blank(m_out[end - 1])) {
      --end;
    }
    return end;
  }

  // Whether the current line, its trailing blanks dropped, ends with a backslash: dropping them
  // (or a comment after it) would splice it with the next line where the original does not.
  bool backslash_before() const
  {
    const size_t end = end_without_blanks();
    return end > m_line_start && m_out[end - 1] == '\\';
  }

  // The blanks at the end of the current line go, unless that would leave a backslash last.
  void end_line()
  {
    if (!backslash_before()) {
      m_out.resize(end_without_blanks());
    }
  }

  void newline()
  {
    end_line();
    m_out += '\n';
    m_line_start = m_out.size();
    m_logical_line_start = m_out.size();
  }

  void copy(size_t end)
  {
    const std::string_view text = m_in.substr(m_at, end - m_at);
    m_out += text;
    if (const size_t newline = text.rfind('\n'); newline != std::string_view::npos) {
      m_line_start = m_out.size() - (text.size() - newline - 1);
    }
    m_at = end;
  }

  // A splice in code joins two lines; next to a '/' or '*', a quote or inside a word it may make
  // a comment, a literal or a token this lexer would not see: the file is not judged.
  bool splice_in_code(size_t splice)
  {
    const char before = m_at == 0 ? '\n' : m_in[m_at - 1];
    const char after = m_at + splice < m_in.size() ? m_in[m_at + splice] : '\n';
    const bool before_ok =
      before == '\n' || is_blank(before) ||
      std::string_view("()[]{};,=+-&|<>!?:").find(before) != std::string_view::npos;
    const bool after_ok = std::string_view("'\"/*").find(after) == std::string_view::npos &&
                          !(is_identifier_char(after) && is_identifier_char(before));
    if (!before_ok || !after_ok) {
      return false;
    }
    copy(m_at + splice);
    return true;
  }

  bool line_comment()
  {
    size_t end = m_at + 2;
    bool spliced = false;
    while (end < m_in.size() && m_in[end] != '\n') {
      if (size_t splice = splice_length(m_in, end)) {
        spliced = true;
        end += splice;
      } else {
        ++end;
      }
    }
    const std::string_view comment = m_in.substr(m_at, end - m_at);
    if (spliced || compiler_reads(comment) || backslash_before()) {
      copy(end);
    } else {
      m_at = end;
    }
    return true;
  }

  bool block_comment()
  {
    const size_t close = m_in.find("*/", m_at + 2);
    if (close == std::string_view::npos) {
      return false;
    }
    const size_t end = close + 2;
    const std::string_view comment = m_in.substr(m_at, end - m_at);
    for (size_t i = 0; i < comment.size(); ++i) {
      if (splice_length(comment, i) != 0) {
        return false;
      }
    }
    const bool ends_line = only_comments_to_line_end(end);
    const bool nested = comment.substr(2, comment.size() - 4).find("/*") != std::string_view::npos;
    if (!ends_line || nested || compiler_reads(comment) || backslash_before()) {
      copy(end);
      return true;
    }
    for (char c : comment) {
      if (c == '\n') {
        end_line();
        m_out += '\n';
        m_line_start = m_out.size();
      }
    }
    m_at = end;
    return true;
  }

  // Whether nothing but blanks and comments follows `from` on its line (a block comment that goes
  // on to another line ends this one).
  bool only_comments_to_line_end(size_t from) const
  {
    size_t at = from;
    while (true) {
      while (at < m_in.size() && is_blank(m_in[at])) {
        ++at;
      }
      if (at == m_in.size() || m_in[at] == '\n' || m_in.substr(at, 2) == "//") {
        return true;
      }
      if (m_in.substr(at, 2) != "/*") {
        return false;
      }
      const size_t close = m_in.find("*/", at + 2);
      if (close == std::string_view::npos) {
        return false;
      }
      if (m_in.substr(at, close - at).find('\n') != std::string_view::npos) {
        return true;
      }
      at = close + 2;
    }
  }

  // A string or character literal, copied as it is; one that meets a newline is not understood.
  bool quoted(char quote)
  {
    size_t end = m_at + 1;
    while (end < m_in.size() && m_in[end] != quote) {
      if (m_in[end] == '\n') {
        return false;
      }
      if (m_in[end] == '\\') {
        const size_t splice = splice_length(m_in, end);
        end += splice != 0 ? splice : 2;
      } else {
        ++end;
      }
    }
    if (end >= m_in.size()) {
      return false;
    }
    copy(end + 1);
    return true;
  }

  // A preprocessing number, digit separators included (1'000'000).
  void number()
  {
    size_t end = m_at + 1;
    while (end < m_in.size()) {
      const char c = m_in[end];
      const bool sign_of_exponent =
        (c == '+' || c == '-') &&
        std::string_view("eEpP").find(m_in[end - 1]) != std::string_view::npos;
      if (is_identifier_char(c) || c == '.' || sign_of_exponent) {
        ++end;
      } else if (c == '\'' && end + 1 < m_in.size() && is_identifier_char(m_in[end + 1])) {
        end += 2;
      } else {
        break;
      }
    }
    copy(end);
  }

  bool identifier()
  {
    size_t end = m_at;
    while (end < m_in.size() && is_identifier_char(m_in[end])) {
      ++end;
    }
    const std::string_view word = m_in.substr(m_at, end - m_at);
    copy(end);
    if (peek(0) == '"' &&
        (word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R")) {
      return raw_string();
    }
    return true;
  }

  bool raw_string()
  {
    const size_t open = m_in.find('(', m_at + 1);
    if (open == std::string_view::npos || open - m_at - 1 > 16) {
      return false;
    }
    const std::string_view delimiter = m_in.substr(m_at + 1, open - m_at - 1);
    if (delimiter.find_first_of(" ()\\\t\v\f\n\"") != std::string_view::npos) {
      return false;
    }
    const std::string closing = ")" + std::string(delimiter) + "\"";
    const size_t close = m_in.find(closing, open + 1);
    if (close == std::string_view::npos) {
      return false;
    }
    copy(close + closing.size());
    return true;
  }

  bool header_name()
  {
    const size_t end = m_in.find_first_of(">\n", m_at + 1);
    if (end == std::string_view::npos || m_in[end] != '>') {
      return false;
    }
    copy(end + 1);
    return true;
  }
};

}  // namespace

std::optional<std::string> code_text(std::string_view text)
{
  if (text.find_first_of(std::string_view("\0\r", 2)) != std::string_view::npos ||
      text.find("__TIMESTAMP__") != std::string_view::npos || holds_trigraph(text)) {
    return std::nullopt;
  }
  return CodeLexer(text).run();
}

bool may_embed_files(std::string_view text)
{
  if (text.find("incbin") != std::string_view::npos ||
      text.find("__has_embed") != std::string_view::npos) {
    return true;
  }
  for (size_t at = text.find("embed"); at != std::string_view::npos;
       at = text.find("embed", at + 1)) {
    const size_t before = text.find_last_not_of(" \t", at == 0 ? 0 : at - 1);
    if (at > 0 && before != std::string_view::npos && text[before] == '#') {
      return true;
    }
  }
  return false;
}

std::optional<Digest> code_digest(std::string_view text)
{
  auto code = code_text(text);
  if (!code) {
    return std::nullopt;
  }
  Hasher hasher;
  hasher.tag(k_code_text_format).add(*code);
  return hasher.digest();
}

}  // namespace nvfresh
