#include "proof/ninja_syntax.hpp"

#include <algorithm>

namespace nvfresh {

std::vector<std::string> ninja_logical_lines(std::string_view text)
{
  std::vector<std::string> lines;
  std::string current;
  bool continuing = false;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    bool continued =
      !line.empty() && line.back() == '$' && (line.size() < 2 || line[line.size() - 2] != '$');
    if (continuing) {
      line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    }
    current += continued ? line.substr(0, line.size() - 1) : line;
    continuing = continued;
    if (!continued) {
      lines.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) {
    lines.push_back(std::move(current));
  }
  return lines;
}

std::vector<std::string> ninja_words(std::string_view line)
{
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  };
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '$' && i + 1 < line.size()) {
      char next = line[++i];
      if (next != ' ' && next != ':' && next != '$') {
        word += '$';  // not an escape: kept as written
      }
      word += next;
    } else if (c == ' ') {
      flush();
    } else if (c == ':') {
      flush();
      words.emplace_back(":");
    } else {
      word += c;
    }
  }
  flush();
  return words;
}

NinjaEdge parse_build_words(const std::vector<std::string>& words)
{
  NinjaEdge edge;
  size_t i = 1;  // skip "build"
  for (; i < words.size() && words[i] != ":"; ++i) {
    if (words[i] != "|") {
      edge.outputs.push_back(words[i]);
    }
  }
  if (++i < words.size()) {
    edge.rule = words[i++];
  }
  auto* target = &edge.explicit_inputs;
  for (; i < words.size(); ++i) {
    if (words[i] == "|") {
      target = &edge.implicit_inputs;
    } else if (words[i] == "||") {
      target = &edge.order_only_inputs;
    } else if (words[i] == "|@") {
      break;  // validations
    } else {
      target->push_back(words[i]);
    }
  }
  return edge;
}

}  // namespace nvfresh
