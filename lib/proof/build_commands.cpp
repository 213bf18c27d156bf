#include "proof/build_commands.hpp"

#include "proof/ninja_syntax.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

using Variables = std::map<std::string, std::string, std::less<>>;

constexpr int k_include_depth_limit = 8;

struct NinjaScope {
  Variables globals;
  std::map<std::string, Variables, std::less<>> rules;
};

bool is_name_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// A variable's value with "$name" and "${name}" looked up through `lookup`, and "$$", "$ ", "$:"
// undone. Each lookup result is used as is (ninja expands a binding when it is declared).
template <typename Lookup>
std::string expand(std::string_view value, const Lookup& lookup)
{
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$' || i + 1 == value.size()) {
      out += value[i];
      continue;
    }
    char next = value[i + 1];
    if (next == '$' || next == ' ' || next == ':') {
      out += next;
      ++i;
    } else if (next == '{') {
      size_t close = value.find('}', i + 2);
      if (close == std::string_view::npos) {
        out += value.substr(i);
        break;
      }
      out += lookup(value.substr(i + 2, close - i - 2));
      i = close;
    } else {
      size_t end = i + 1;
      while (end < value.size() && is_name_char(value[end])) {
        ++end;
      }
      out += lookup(value.substr(i + 1, end - i - 1));
      i = end - 1;
    }
  }
  return out;
}

// "  name = value" -> {name, value}; false when the line is no binding.
bool split_binding(std::string_view line, std::string& name, std::string& value)
{
  size_t equals = line.find('=');
  if (equals == std::string_view::npos) {
    return false;
  }
  auto trim = [](std::string_view text) {
    size_t first = text.find_first_not_of(' ');
    size_t last = text.find_last_not_of(' ');
    return first == std::string_view::npos ? std::string_view()
                                           : text.substr(first, last - first + 1);
  };
  name = std::string(trim(line.substr(0, equals)));
  std::string_view rest = line.substr(equals + 1);  // ninja keeps trailing spaces ("$ ")
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  value = std::string(rest);
  return !name.empty() && std::all_of(name.begin(), name.end(), is_name_char);
}

std::string join(const std::vector<std::string>& words)
{
  std::string out;
  for (const auto& word : words) {
    out += out.empty() ? "" : " ";
    out += word;
  }
  return out;
}

struct PendingEdge {
  NinjaEdge edge;
  Variables bindings;
};

BuildCommand command_of(const PendingEdge& pending, const NinjaScope& scope)
{
  const NinjaEdge& edge = pending.edge;
  BuildCommand command;
  command.output = edge.outputs.empty() ? "" : edge.outputs.front();
  for (const auto* inputs :
       {&edge.explicit_inputs, &edge.implicit_inputs, &edge.order_only_inputs}) {
    command.inputs.insert(command.inputs.end(), inputs->begin(), inputs->end());
  }
  auto rule = scope.rules.find(edge.rule);
  if (rule == scope.rules.end()) {
    return command;  // phony, or a rule this file does not define
  }
  std::function<std::string(std::string_view)> lookup = [&](std::string_view name) -> std::string {
    if (name == "in") {
      return join(edge.explicit_inputs);
    }
    if (name == "out") {
      return join(edge.outputs);
    }
    if (auto found = pending.bindings.find(name); found != pending.bindings.end()) {
      return found->second;
    }
    if (auto found = rule->second.find(name); found != rule->second.end() && name != "command") {
      return expand(found->second, lookup);
    }
    auto found = scope.globals.find(name);
    return found != scope.globals.end() ? found->second : std::string();
  };
  if (auto text = rule->second.find("command"); text != rule->second.end()) {
    command.command = expand(text->second, lookup);
  }
  if (auto text = rule->second.find("description"); text != rule->second.end()) {
    command.description = expand(text->second, lookup);
  }
  return command;
}

class NinjaReader {
public:
  NinjaReader(const std::string& build_dir, IncludeReader read_include)
    : m_build_dir(build_dir), m_read_include(read_include)
  {}

  void read(std::string_view text, int depth);
  std::vector<BuildCommand> take() { return std::move(m_commands); }

private:
  void finish_block();
  std::string expand_global(std::string_view value) const
  {
    return expand(value, [&](std::string_view name) {
      auto found = m_scope.globals.find(name);
      return found != m_scope.globals.end() ? found->second : std::string();
    });
  }

  const std::string& m_build_dir;
  IncludeReader m_read_include;
  NinjaScope m_scope;
  std::vector<BuildCommand> m_commands;
  std::string m_rule;                 // the rule block being read, or ""
  std::optional<PendingEdge> m_edge;  // the build block being read
};

void NinjaReader::finish_block()
{
  if (m_edge) {
    m_commands.push_back(command_of(*m_edge, m_scope));
    m_edge.reset();
  }
  m_rule.clear();
}

void NinjaReader::read(std::string_view text, int depth)
{
  for (const auto& line : ninja_logical_lines(text)) {
    std::string name;
    std::string value;
    if (line.empty() || line.front() == '#') {
      continue;
    }
    if (line.front() == ' ') {
      if (split_binding(line, name, value)) {
        if (m_edge) {
          m_edge->bindings[name] = expand_global(value);
        } else if (!m_rule.empty()) {
          m_scope.rules[m_rule][name] = value;  // expanded per edge
        }
      }
      continue;
    }
    finish_block();
    if (line.starts_with("rule ")) {
      m_rule = line.substr(5);
      m_scope.rules[m_rule];
    } else if (line.starts_with("build ")) {
      m_edge = PendingEdge{parse_build_words(ninja_words(line)), {}};
    } else if (line.starts_with("include ") || line.starts_with("subninja ")) {
      if (depth < k_include_depth_limit) {
        std::string path = expand_global(line.substr(line.find(' ') + 1));
        read(m_read_include(m_build_dir, path), depth + 1);
      }
    } else if (split_binding(line, name, value)) {
      m_scope.globals[name] = expand_global(value);
    }
  }
  finish_block();
}

std::string read_tree_file(const std::string& build_dir, const std::string& path)
{
  return try_read_file(absolute_path(path, build_dir)).value_or(std::string());
}

void flush_make_rule(std::vector<BuildCommand>& commands, BuildCommand& current)
{
  if (!current.output.empty() && !current.command.empty()) {
    commands.push_back(current);
  }
  current = BuildCommand{};
}

}  // namespace

std::vector<BuildCommand> parse_ninja_commands(std::string_view text, const std::string& build_dir,
                                               IncludeReader read_include)
{
  NinjaReader reader(build_dir, read_include);
  reader.read(text, 0);
  return reader.take();
}

std::vector<BuildCommand> parse_make_recipes(std::string_view text)
{
  std::vector<BuildCommand> commands;
  std::map<std::string, std::vector<std::string>> prerequisites;
  BuildCommand current;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.front() == '\t') {
      std::string_view recipe = line.substr(1);
      recipe.remove_prefix(std::min(recipe.find_first_not_of("@-+"), recipe.size()));
      current.command += current.command.empty() ? "" : " && ";
      current.command += recipe;
      continue;
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || line.find('=') < colon) {
      continue;  // a variable assignment or an include
    }
    std::string target(line.substr(0, colon));
    std::string_view rest = line.substr(colon + 1);
    rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
    if (target != current.output) {
      flush_make_rule(commands, current);
      current.output = target;
    }
    if (!rest.empty()) {
      prerequisites[target].emplace_back(rest);
    }
  }
  flush_make_rule(commands, current);
  for (auto& command : commands) {
    command.inputs = prerequisites[command.output];
  }
  return commands;
}

BuildCommands load_build_commands(const std::string& build_dir)
{
  BuildCommands result;
  if (auto ninja = try_read_file(build_dir + "/build.ninja")) {
    result.generator = "ninja";
    result.commands = parse_ninja_commands(*ninja, build_dir, read_tree_file);
    return result;
  }
  if (!stat_file(build_dir + "/Makefile").exists) {
    return result;
  }
  result.generator = "make";
  std::error_code error;
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(build_dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory(error) && (it->path().filename() == ".nvfresh" ||
                                    stat_file(it->path().string() + "/CMakeCache.txt").exists)) {
      it.disable_recursion_pending();  // a nested build tree (an ExternalProject's) has its own
      continue;
    }
    if (it->path().filename() == "build.make" &&
        it->path().parent_path().parent_path().filename() == "CMakeFiles") {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto text = try_read_file(file);
    for (auto& command : parse_make_recipes(text.value_or(std::string()))) {
      result.commands.push_back(std::move(command));
    }
  }
  return result;
}

}  // namespace nvfresh
