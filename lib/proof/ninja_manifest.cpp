#include "proof/ninja_manifest.hpp"

#include "proof/ninja_syntax.hpp"

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

// The logical lines that start with "build " (continuations joined).
std::vector<std::string> ninja_build_lines(std::string_view text)
{
  std::vector<std::string> lines = ninja_logical_lines(text);
  std::erase_if(lines, [](const std::string& line) { return !line.starts_with("build "); });
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
