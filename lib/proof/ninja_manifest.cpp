#include "proof/ninja_manifest.hpp"

#include <algorithm>
#include <map>

namespace nvfresh {

namespace {

// How CMake's Ninja generator names the link rule of each kind of artifact.
struct KindRule {
  ArtifactKind kind;
  std::string_view ninja_rule_part;
};

constexpr std::string_view k_cuda_compile_rule = "CUDA_COMPILER__";  // "CUDA_COMPILER__<t>_<cfg>"

constexpr KindRule k_kind_rules[] = {
  {ArtifactKind::executable, "_EXECUTABLE_LINKER__"},
  {ArtifactKind::shared_library, "_SHARED_LIBRARY_LINKER__"},
  {ArtifactKind::module_library, "_MODULE_LIBRARY_LINKER__"},
  {ArtifactKind::static_library, "_STATIC_LIBRARY_LINKER__"},
};

// One logical line of build.ninja ("$\n" continuations joined), split into words with the
// escapes "$ ", "$:", "$$" undone. An unescaped ':' ends a word and is its own word ":".
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
      word += (next == ' ' || next == ':' || next == '$') ? std::string(1, next)
                                                          : "$" + std::string(1, next);
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

// The logical lines that start with "build " (continuations joined).
std::vector<std::string> ninja_build_lines(std::string_view text)
{
  std::vector<std::string> lines;
  std::string current;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    bool continued =
      !line.empty() && line.back() == '$' && (line.size() < 2 || line[line.size() - 2] != '$');
    if (!current.empty()) {
      line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    }
    current += continued ? line.substr(0, line.size() - 1) : line;
    if (!continued) {
      if (current.rfind("build ", 0) == 0) {
        lines.push_back(std::move(current));
      }
      current.clear();
    }
  }
  return lines;
}

const KindRule* kind_of_rule(std::string_view rule)
{
  for (const auto& entry : k_kind_rules) {
    if (rule.find(entry.ninja_rule_part) != std::string_view::npos) {
      return &entry;
    }
  }
  return nullptr;
}

struct NinjaEdge {
  std::vector<std::string> outputs;
  std::string rule;
  std::vector<std::string> explicit_inputs;
  std::vector<std::string> implicit_inputs;
};

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
    } else if (words[i] == "||" || words[i] == "|@") {
      break;
    } else {
      target->push_back(words[i]);
    }
  }
  return edge;
}

LinkEdge link_edge_from(const NinjaEdge& edge, const KindRule& kind, const std::string& build_dir)
{
  LinkEdge link;
  link.artifact = graph_path(edge.outputs.front(), build_dir);
  link.kind = kind.kind;
  size_t name_at = edge.rule.find(kind.ninja_rule_part) + kind.ninja_rule_part.size();
  std::string name = edge.rule.substr(name_at);
  link.target = name.substr(0, name.rfind('_'));
  for (const auto* inputs : {&edge.explicit_inputs, &edge.implicit_inputs}) {
    for (const auto& input : *inputs) {
      (is_object_path(input) ? link.objects : link.libraries)
        .push_back(graph_path(input, build_dir));
      link.dependencies.push_back(graph_path(input, build_dir));
    }
  }
  link.dependencies_known = true;
  return link;
}

}  // namespace

BuildGraph parse_ninja_manifest(std::string_view text, const std::string& build_dir)
{
  BuildGraph graph;
  graph.generator = "ninja";
  std::map<std::string, std::string> aliases;  // artifact -> phony target name
  for (const auto& line : ninja_build_lines(text)) {
    NinjaEdge edge = parse_build_words(ninja_words(line));
    if (edge.outputs.empty()) {
      continue;
    }
    if (edge.rule == "phony" && edge.outputs.size() == 1 && edge.explicit_inputs.size() == 1 &&
        edge.outputs[0].find('/') == std::string::npos) {
      aliases.emplace(graph_path(edge.explicit_inputs[0], build_dir), edge.outputs[0]);
    } else if (const KindRule* kind = kind_of_rule(edge.rule)) {
      graph.edges.push_back(link_edge_from(edge, *kind, build_dir));
    } else if (edge.rule.starts_with(k_cuda_compile_rule) && !edge.explicit_inputs.empty()) {
      graph.cuda_compiles.push_back({graph_path(edge.outputs.front(), build_dir),
                                     graph_path(edge.explicit_inputs.front(), build_dir)});
    }
  }
  for (auto& edge : graph.edges) {
    if (auto alias = aliases.find(edge.artifact); alias != aliases.end()) {
      edge.target = alias->second;
    }
  }
  keep_known_libraries(graph);
  return graph;
}

}  // namespace nvfresh
