#include "digest/ptx.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace nvfresh {

namespace {

constexpr std::string_view k_blank = " \t\r";
constexpr std::array k_target_prefixes{std::string_view{"sm_"}, std::string_view{"compute_"}};

std::string_view trim(std::string_view text)
{
  const auto begin = text.find_first_not_of(k_blank);
  if (begin == std::string_view::npos) {
    return {};
  }
  return text.substr(begin, text.find_last_not_of(k_blank) - begin + 1);
}

// One line without its comments; a /* */ comment may run on from the line before (`in_comment`).
std::string code_of(std::string_view line, bool& in_comment)
{
  std::string code;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (in_comment) {
      if (line.compare(i, 2, "*/") == 0) {
        in_comment = false;
        ++i;
      }
      continue;
    }
    if (line.compare(i, 2, "//") == 0) {
      break;
    }
    if (line.compare(i, 2, "/*") == 0) {
      in_comment = true;
      ++i;
      continue;
    }
    code.push_back(line[i]);
  }
  return code;
}

bool is_name_char(char c)
{
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '%' ||
         c == '.';
}

// `keyword` (".entry") as a whole token of `code`: not part of a longer name.
std::size_t find_token(std::string_view code, std::string_view keyword)
{
  for (auto at = code.find(keyword); at != std::string_view::npos;
       at = code.find(keyword, at + 1)) {
    const bool starts = at == 0 || !is_name_char(code[at - 1]);
    const std::size_t end = at + keyword.size();
    if (starts && (end == code.size() || !is_name_char(code[end]))) {
      return at;
    }
  }
  return std::string_view::npos;
}

// The name after `.entry`, or after `.func` and its optional return-parameter list.
std::string function_name(std::string_view header, std::string_view keyword)
{
  const std::size_t token = find_token(header, keyword);
  if (token == std::string_view::npos) {
    return {};  // a header the scanner took for one without the keyword as a whole token
  }
  std::size_t at = token + keyword.size();
  const auto skip_blanks = [&] {
    while (at < header.size() && k_blank.find(header[at]) != std::string_view::npos) {
      ++at;
    }
  };
  skip_blanks();
  if (at < header.size() && header[at] == '(') {
    for (int depth = 0; at < header.size(); ++at) {
      depth += header[at] == '(' ? 1 : header[at] == ')' ? -1 : 0;
      if (depth == 0) {
        ++at;
        break;
      }
    }
    skip_blanks();
  }
  const std::size_t begin = at;
  while (at < header.size() && is_name_char(header[at])) {
    ++at;
  }
  return std::string(header.substr(begin, at - begin));
}

// "%rd<3000>" from ".reg .b64 %rd<3000>;" (several names stay as written, blanks squeezed).
std::string declared_registers(std::string_view statement)
{
  const auto first = statement.find('%');
  if (first == std::string_view::npos) {
    return {};
  }
  std::string names;
  for (char c : trim(statement.substr(first, statement.find(';') - first))) {
    if (k_blank.find(c) == std::string_view::npos) {
      names.push_back(c);
    } else if (!names.empty() && names.back() != ' ') {
      names.push_back(' ');
    }
  }
  return names;
}

// Adds one body line (at brace depth `depth` when it starts) to the function's counts.
void count_statement(std::string_view code, int depth, PtxFunction& function)
{
  const std::string_view statement = trim(code);
  if (statement.empty() || statement.front() == '{' || statement.front() == '}' ||
      statement.back() == ':') {
    return;
  }
  if (statement.starts_with(".reg") && depth == 1) {
    const std::string names = declared_registers(statement);
    function.registers += (function.registers.empty() || names.empty() ? "" : " ") + names;
    return;
  }
  if (statement.front() != '.' && statement.find(';') != std::string_view::npos) {
    ++function.instruction_count;
  }
}

// Walks the lines: outside a function, in a function's header (until its `{`), or in its body
// (until the matching `}`).
class FunctionScanner {
public:
  void line(std::size_t index, std::string code)
  {
    if (m_state == State::outside) {
      const bool entry = find_token(code, ".entry") != std::string::npos;
      if (!entry && find_token(code, ".func") == std::string::npos) {
        return;
      }
      m_state = State::header;
      m_function = PtxFunction{};
      m_function.is_entry = entry;
      m_function.first_line = index;
      m_header.clear();
    }
    if (m_state == State::header && !header_line(code)) {
      return;
    }
    body_line(index, code);
  }

  std::vector<PtxFunction> take() { return std::move(m_functions); }

private:
  enum class State { outside, header, body };

  // Collects the header; at its `{` names the function, leaves the body's part of the line in
  // `code` and returns true. A prototype (`;` before any `{`) is dropped.
  bool header_line(std::string& code)
  {
    const auto brace = code.find('{');
    const auto semicolon = code.find(';');
    if (semicolon != std::string::npos && (brace == std::string::npos || semicolon < brace)) {
      m_state = State::outside;
      return false;
    }
    m_header += code.substr(0, brace) + " ";
    if (brace == std::string::npos) {
      return false;
    }
    m_function.name = function_name(m_header, m_function.is_entry ? ".entry" : ".func");
    m_state = State::body;
    m_depth = 0;
    code.erase(0, brace);
    return true;
  }

  void body_line(std::size_t index, const std::string& code)
  {
    count_statement(code, m_depth, m_function);
    for (char c : code) {
      if (c == '{') {
        ++m_depth;
      } else if (c == '}' && --m_depth == 0) {
        m_function.last_line = index;
        m_functions.push_back(std::move(m_function));
        m_state = State::outside;
        return;
      }
    }
  }

  State m_state = State::outside;
  PtxFunction m_function;
  std::string m_header;
  int m_depth = 0;
  std::vector<PtxFunction> m_functions;
};

}  // namespace

std::string ptx_target(std::string_view ptx)
{
  bool in_comment = false;
  for (const auto line : split_text_lines(ptx)) {
    const std::string code = code_of(line, in_comment);
    const std::string_view statement = trim(code);
    if (find_token(statement, ".target") != 0) {
      continue;
    }
    std::string_view rest = statement.substr(std::string_view{".target"}.size());
    while (!rest.empty()) {
      const auto begin = rest.find_first_not_of(", \t;");
      if (begin == std::string_view::npos) {
        break;
      }
      const auto end = std::min(rest.find_first_of(", \t;", begin), rest.size());
      const std::string_view item = rest.substr(begin, end - begin);
      if (std::any_of(k_target_prefixes.begin(), k_target_prefixes.end(),
                      [&](std::string_view prefix) { return item.starts_with(prefix); })) {
        return std::string(item);
      }
      rest = rest.substr(end);
    }
    return {};
  }
  return {};
}

std::vector<PtxFunction> ptx_functions(const std::vector<std::string_view>& lines)
{
  FunctionScanner scanner;
  bool in_comment = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    scanner.line(i, code_of(lines[i], in_comment));
  }
  return scanner.take();
}

std::vector<std::string_view> split_text_lines(std::string_view text)
{
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace nvfresh
