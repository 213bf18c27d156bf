#include "proof/build_graph.hpp"

#include "util/file_io.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

namespace nvfresh {

namespace fs = std::filesystem;

std::string canonical_dir(const std::string& dir)
{
  std::error_code error;
  auto canonical = fs::weakly_canonical(dir, error);
  return error ? dir : canonical.string();
}

void keep_known_libraries(BuildGraph& graph)
{
  std::set<std::string> artifacts;
  for (const auto& edge : graph.edges) {
    artifacts.insert(edge.artifact);
  }
  for (auto& edge : graph.edges) {
    std::erase_if(edge.libraries, [&](const std::string& lib) {
      return lib == edge.artifact || artifacts.count(lib) == 0;
    });
  }
}

const LinkEdge* BuildGraph::find(const std::string& wanted) const
{
  std::string absolute = graph_path(wanted, current_directory());
  std::string canonical = canonical_dir(absolute);
  for (const auto& edge : edges) {
    if (edge.artifact == absolute || edge.artifact == canonical || edge.target == wanted ||
        fs::path(edge.artifact).filename() == wanted) {
      return &edge;
    }
  }
  return nullptr;
}

std::vector<std::string> BuildGraph::linked_closure(const std::string& artifact) const
{
  std::vector<std::string> closure;
  std::vector<std::string> todo = {artifact};
  while (!todo.empty()) {
    std::string current = todo.back();
    todo.pop_back();
    const LinkEdge* edge = find(current);
    for (const auto& lib : edge != nullptr ? edge->libraries : std::vector<std::string>{}) {
      if (std::find(closure.begin(), closure.end(), lib) == closure.end()) {
        closure.push_back(lib);
        todo.push_back(lib);
      }
    }
  }
  return closure;
}

std::vector<const LinkEdge*> BuildGraph::containing(const std::string& object) const
{
  std::vector<const LinkEdge*> result;
  for (const auto& edge : edges) {
    if (std::find(edge.objects.begin(), edge.objects.end(), object) != edge.objects.end()) {
      result.push_back(&edge);
    }
  }
  return result;
}

}  // namespace nvfresh
