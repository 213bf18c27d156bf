#include "util/words.hpp"

namespace nvfresh {

namespace {

bool is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

class WordSplitter {
public:
  WordSplitter(std::string_view text, QuoteRules rules) : m_text(text), m_rules(rules) {}

  std::vector<std::string> split()
  {
    while (m_pos < m_text.size()) {
      step(m_text[m_pos]);
    }
    finish_word();
    return std::move(m_words);
  }

private:
  void step(char c)
  {
    if (m_quote != 0) {
      step_quoted(c);
    } else if (is_space(c)) {
      finish_word();
      ++m_pos;
    } else if (c == '"' || (c == '\'' && m_rules.single_quotes_group)) {
      open_quote(c);
    } else if (c == '\\' && m_rules.backslash_escapes && m_pos + 1 < m_text.size()) {
      append(m_text[m_pos + 1]);
      m_pos += 2;
    } else {
      append(c);
      ++m_pos;
    }
  }

  void step_quoted(char c)
  {
    const bool escapable = c == '\\' && m_quote == '"' && m_rules.backslash_escapes &&
                           m_pos + 1 < m_text.size() &&
                           (m_text[m_pos + 1] == '"' || m_text[m_pos + 1] == '\\');
    if (escapable) {
      append(m_text[m_pos + 1]);
      m_pos += 2;
      return;
    }
    if (c == m_quote) {
      if (m_rules.keep_double_quotes) {
        append(c);
      }
      m_quote = 0;
    } else {
      append(c);
    }
    ++m_pos;
  }

  void open_quote(char c)
  {
    m_quote = c;
    m_in_word = true;
    if (c == '"' && m_rules.keep_double_quotes) {
      m_current += c;
    }
    ++m_pos;
  }

  void append(char c)
  {
    m_current += c;
    m_in_word = true;
  }

  void finish_word()
  {
    if (m_in_word) {
      m_words.push_back(std::move(m_current));
      m_current.clear();
      m_in_word = false;
    }
  }

  std::string_view m_text;
  QuoteRules m_rules;
  std::size_t m_pos = 0;
  char m_quote = 0;
  bool m_in_word = false;
  std::string m_current;
  std::vector<std::string> m_words;
};

}  // namespace

std::vector<std::string> split_words(std::string_view text, QuoteRules rules)
{
  return WordSplitter(text, rules).split();
}

}  // namespace nvfresh
