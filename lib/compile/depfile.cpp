// Make-syntax dependency files; see depfile.hpp for the accepted grammar and the written layout.
#include "compile/depfile.hpp"

#include "util/string_hash.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace nvfresh {
namespace {

// One word of a logical line; `separator` is set when an unescaped ':' ended it.
struct Word {
  std::string text;
  bool separator = false;
};

struct Rule {
  std::vector<std::string> targets;
  std::vector<std::string> prerequisites;
};

bool is_blank(char c)
{
  return c == ' ' || c == '\t';
}

// Splits depfile text into words and logical lines, undoing the escapes on the way.
class Scanner {
public:
  Scanner(std::string_view text, DepfileDialect dialect)
    : m_text(text), m_escapes(dialect == DepfileDialect::k_make)
  {}

  bool at_end() const { return m_pos >= m_text.size(); }

  // Reads the words of the next logical line; comments and continuations are consumed.
  std::vector<Word> next_line();

private:
  char peek(std::size_t ahead = 0) const
  {
    return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
  }
  bool at(std::size_t ahead) const { return m_pos + ahead < m_text.size(); }
  std::size_t newline_length(std::size_t ahead) const;
  std::size_t continuation_length() const;
  bool ends_word(std::size_t ahead) const;
  void skip_blanks_and_continuations();
  void skip_comment();
  Word read_word();
  bool read_backslashes(Word& word);

  std::string_view m_text;
  bool m_escapes;  // whether '$$', '\#' and '\:' are escapes (make dialect) or literal (nvcc)
  std::size_t m_pos = 0;
};

// Length of a line end ("\n" or "\r\n") starting `ahead` bytes on, 0 if none.
std::size_t Scanner::newline_length(std::size_t ahead) const
{
  if (peek(ahead) == '\n') {
    return 1;
  }
  if (peek(ahead) == '\r' && peek(ahead + 1) == '\n') {
    return 2;
  }
  return 0;
}

// Length of a backslash-newline continuation at the cursor, 0 if none.
std::size_t Scanner::continuation_length() const
{
  if (peek() != '\\') {
    return 0;
  }
  const std::size_t newline = newline_length(1);
  return newline == 0 ? 0 : newline + 1;
}

// Whether the byte `ahead` on ends a word: the end, a blank, a line end or a continuation.
bool Scanner::ends_word(std::size_t ahead) const
{
  if (!at(ahead) || is_blank(peek(ahead)) || newline_length(ahead) != 0) {
    return true;
  }
  return peek(ahead) == '\\' && newline_length(ahead + 1) != 0;
}

void Scanner::skip_blanks_and_continuations()
{
  while (!at_end()) {
    if (is_blank(peek())) {
      ++m_pos;
    } else if (const std::size_t length = continuation_length(); length != 0) {
      m_pos += length;
    } else {
      return;
    }
  }
}

void Scanner::skip_comment()
{
  while (!at_end() && newline_length(0) == 0) {
    ++m_pos;
  }
}

std::vector<Word> Scanner::next_line()
{
  std::vector<Word> words;
  for (;;) {
    skip_blanks_and_continuations();
    if (at_end()) {
      return words;
    }
    if (const std::size_t newline = newline_length(0); newline != 0) {
      m_pos += newline;
      return words;
    }
    if (peek() == '#' && words.empty()) {
      skip_comment();
      continue;
    }
    words.push_back(read_word());
  }
}

// Handles a run of backslashes at the cursor; returns true when it ended the word at a separator.
bool Scanner::read_backslashes(Word& word)
{
  std::size_t count = 0;
  while (peek(count) == '\\') {
    ++count;
  }
  if (newline_length(count) != 0) {
    // All but the last backslash are literal; the last one starts a continuation.
    word.text.append(count - 1, '\\');
    m_pos += count - 1;
    return false;
  }
  const char next = at(count) ? peek(count) : '\0';
  m_pos += count;
  if (next == ' ' && count % 2 == 1) {
    word.text.append(count / 2, '\\');
    word.text += ' ';
    ++m_pos;
  } else if (m_escapes && (next == '#' || (next == ':' && !ends_word(1)))) {
    word.text.append(count - 1, '\\');
    word.text += next;
    ++m_pos;
  } else if (next == ':' && ends_word(1)) {
    word.text.append(count, '\\');
    word.separator = true;
    ++m_pos;
    return true;
  } else {
    word.text.append(count, '\\');  // also 2N backslashes before a space: they end the word
  }
  return false;
}

Word Scanner::read_word()
{
  Word word;
  while (!ends_word(0)) {
    const char c = peek();
    if (c == '\\') {
      if (read_backslashes(word)) {
        return word;
      }
    } else if (c == ':' && ends_word(1)) {
      ++m_pos;
      word.separator = true;
      return word;
    } else if (m_escapes && c == '$' && peek(1) == '$') {
      word.text += '$';
      m_pos += 2;
    } else {
      word.text += c;
      ++m_pos;
    }
  }
  return word;
}

void append_unique(std::vector<std::string>& list, std::string item)
{
  if (std::find(list.begin(), list.end(), item) == list.end()) {
    list.push_back(std::move(item));
  }
}

// Turns the words of one logical line into a rule.
std::optional<Rule> make_rule(std::vector<Word>& words, std::string& error)
{
  Rule rule;
  bool seen_separator = false;
  for (Word& word : words) {
    if (word.separator && seen_separator) {
      error = "a second ':' in one rule (after '" + word.text + "')";
      return std::nullopt;
    }
    auto& list = seen_separator ? rule.prerequisites : rule.targets;
    if (!word.text.empty()) {
      list.push_back(std::move(word.text));
    }
    seen_separator = seen_separator || word.separator;
  }
  if (!seen_separator) {
    error = "expected ':' in a depfile rule";
    return std::nullopt;
  }
  if (rule.targets.empty()) {
    error = "a depfile rule without a target";
    return std::nullopt;
  }
  return rule;
}

bool contains(const std::vector<std::string>& list, const std::string& item)
{
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Folds one rule into the result: the first rule defines the targets, later ones may only add
// prerequisites to those targets (phony rules without prerequisites are skipped).
bool add_rule(Depfile& depfile, Rule rule, bool first, std::string& error)
{
  if (first) {
    for (std::string& target : rule.targets) {
      append_unique(depfile.targets, std::move(target));
    }
  } else if (rule.prerequisites.empty()) {
    return true;
  } else {
    for (const std::string& target : rule.targets) {
      if (!contains(depfile.targets, target)) {
        error = "prerequisites for '" + target + "', which is not a target of the first rule";
        return false;
      }
    }
  }
  for (std::string& prerequisite : rule.prerequisites) {
    append_unique(depfile.prerequisites, std::move(prerequisite));
  }
  return true;
}

// Bytes ninja 1.11's depfile lexer takes as plain text, minus those GNU make treats specially.
bool is_plain_byte(unsigned char c)
{
  if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
    return true;
  }
  constexpr std::string_view k_plain_punctuation = "+,/_:.~(){}%@!-";
  return k_plain_punctuation.find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_safe_backslash(std::string_view path, std::size_t index)
{
  if (index + 1 >= path.size()) {
    return false;
  }
  constexpr std::string_view k_unsafe_after_backslash = " #:$\\";
  return k_unsafe_after_backslash.find(path[index + 1]) == std::string_view::npos;
}

}  // namespace

std::optional<Depfile> parse_depfile(std::string_view text, std::string* error,
                                     DepfileDialect dialect)
{
  Scanner scanner(text, dialect);
  Depfile depfile;
  std::string reason;
  bool first = true;
  while (!scanner.at_end()) {
    std::vector<Word> words = scanner.next_line();
    if (words.empty()) {
      continue;
    }
    std::optional<Rule> rule = make_rule(words, reason);
    if (!rule || !add_rule(depfile, std::move(*rule), first, reason)) {
      if (error != nullptr) {
        *error = std::move(reason);
      }
      return std::nullopt;
    }
    first = false;
  }
  return depfile;
}

namespace {

// Whether a path has any byte escape_depfile_path changes (a 1-byte table lookup per byte: a skip
// writes a CUTLASS TU's depfile of two thousand paths, and find_first_of made it a tenth of the skip).
// The bytes a depfile path escapes, as a table: a skip writes the depfile of a CUTLASS TU again,
// 66 KB of paths, looked at twice with -MP.
constexpr std::array<bool, 256> k_escaped_bytes = [] {
  std::array<bool, 256> table{};
  for (const unsigned char c : {' ', '#', ':', '$'}) {
    table[c] = true;
  }
  return table;
}();

bool needs_depfile_escape(std::string_view path)
{
  return std::any_of(path.begin(), path.end(),
                     [](char c) { return k_escaped_bytes[static_cast<unsigned char>(c)]; });
}

// A path as the depfile spells it: as it is (a view of it) in the common case, else escaped into
// `storage`.
std::string_view depfile_spelling(std::string_view path, std::string& storage)
{
  if (!needs_depfile_escape(path)) {
    return path;
  }
  storage = escape_depfile_path(path);
  return storage;
}

// The first occurrence of each path, in their order: an open-addressing table of indices (the
// paths hashed once each, nothing allocated per path).
std::vector<std::string_view> first_occurrences(const std::vector<std::string>& paths)
{
  size_t slots = 16;
  while (slots < 2 * paths.size()) {
    slots *= 2;
  }
  std::vector<std::uint32_t> table(slots, 0);  // 1 + an index into `unique`; 0: empty
  std::vector<std::string_view> unique;
  unique.reserve(paths.size());
  const StringHash hash;
  for (const std::string& path : paths) {
    size_t slot = hash(path) & (slots - 1);
    bool seen = false;
    while (table[slot] != 0) {
      if (unique[table[slot] - 1] == path) {
        seen = true;
        break;
      }
      slot = (slot + 1) & (slots - 1);
    }
    if (!seen) {
      unique.push_back(path);
      table[slot] = static_cast<std::uint32_t>(unique.size());
    }
  }
  return unique;
}

}  // namespace

std::string escape_depfile_path(std::string_view path)
{
  if (!needs_depfile_escape(path)) {
    return std::string(path);  // the common case
  }
  std::string escaped;
  escaped.reserve(path.size() + 8);
  std::size_t pending_backslashes = 0;
  for (const char c : path) {
    if (c == ' ') {
      escaped.append(pending_backslashes + 1, '\\');  // gcc: double the backslashes before it
    } else if (c == '#' || c == ':') {
      escaped += '\\';
    } else if (c == '$') {
      escaped += '$';
    }
    escaped += c;
    pending_backslashes = c == '\\' ? pending_backslashes + 1 : 0;
  }
  return escaped;
}

bool depfile_can_represent(std::string_view path)
{
  if (path.empty() || path.front() == '~' || path.back() == ':') {
    return false;
  }
  if (path.back() == ')' && path.find('(') != std::string_view::npos) {
    return false;
  }
  for (std::size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '\\') {
      if (!is_safe_backslash(path, i)) {
        return false;
      }
    } else if (c != ' ' && c != '#' && c != '$' && !is_plain_byte(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

std::string format_depfile(std::string_view target, const std::vector<std::string>& prerequisites,
                           bool phony_targets)
{
  const std::vector<std::string_view> unique = first_occurrences(prerequisites);
  std::deque<std::string> escaped_storage(1);  // the paths that needed escaping, escaped (a deque:
                                               // views of them stay valid as it grows)
  std::vector<std::string_view> spelled;
  spelled.reserve(unique.size());
  size_t bytes = target.size() + 4;
  for (std::string_view path : unique) {
    std::string_view spelling = depfile_spelling(path, escaped_storage.back());
    if (spelling.data() != path.data()) {
      escaped_storage.emplace_back();
    }
    spelled.push_back(spelling);
    bytes += 2 * spelling.size() + 12;
  }
  std::string text(target);
  text.reserve(bytes);
  text += " :";
  for (std::size_t i = 0; i < spelled.size(); ++i) {
    text += i == 0 ? " " : " \\\n    ";
    text += spelled[i];
  }
  text += '\n';
  if (!phony_targets) {
    return text;
  }
  for (std::size_t i = 1; i < unique.size(); ++i) {
    // A '%' would make the phony rule a pattern rule in make; the target itself needs none.
    if (unique[i].find('%') != std::string::npos || unique[i] == target) {
      continue;
    }
    text += '\n';
    text += spelled[i];
    text += ":\n";
  }
  return text;
}

}  // namespace nvfresh
