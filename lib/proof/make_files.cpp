#include "proof/make_files.hpp"

#include "proof/link_command.hpp"
#include "util/file_io.hpp"
#include "util/words.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

namespace nvfresh {

namespace {

namespace fs = std::filesystem;

std::map<std::string, std::vector<std::string>> parse_make_prerequisites(std::string_view text,
                                                                         const std::string& run_dir)
{
  std::map<std::string, std::vector<std::string>> prerequisites;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    const size_t colon = line.find(": ");
    if (line.empty() || line[0] == '\t' || line[0] == '#' || line[0] == '.' ||
        colon == std::string_view::npos || line.find('$') != std::string_view::npos) {
      continue;
    }
    prerequisites[graph_path(std::string(line.substr(0, colon)), run_dir)].push_back(
      graph_path(std::string(line.substr(colon + 2)), run_dir));
  }
  return prerequisites;
}

// "ar qc lib.a <objects>" then "ar q lib.a cmake_device_link.o": one artifact, one edge.
void add_or_merge(BuildGraph& graph, LinkEdge edge)
{
  auto same = std::find_if(graph.edges.begin(), graph.edges.end(),
                           [&](const LinkEdge& e) { return e.artifact == edge.artifact; });
  if (same == graph.edges.end()) {
    graph.edges.push_back(std::move(edge));
    return;
  }
  same->objects.insert(same->objects.end(), edge.objects.begin(), edge.objects.end());
  same->libraries.insert(same->libraries.end(), edge.libraries.begin(), edge.libraries.end());
}

}  // namespace

std::vector<LinkEdge> parse_make_link_commands(std::string_view text, const std::string& run_dir,
                                               const std::string& target)
{
  std::vector<LinkEdge> edges;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    auto words =
      expand_response_files(split_words(text.substr(begin, end - begin), k_shell_quotes), run_dir);
    begin = end + 1;
    if (auto edge = describe_link_command(words, run_dir)) {
      edge->target = target;
      edges.push_back(std::move(*edge));
    }
  }
  return edges;
}

std::vector<CompileEdge> parse_make_cuda_compiles(std::string_view text, const std::string& run_dir)
{
  // "<object>: <prerequisite>" lines come first, then the recipe that echoes "Building CUDA object
  // <object>": the source is the prerequisite that is none of CMake's own files.
  constexpr std::string_view k_echo = "Building CUDA object ";
  std::vector<CompileEdge> compiles;
  std::map<std::string, std::string> sources;  // object -> source, as the rules name them
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (auto at = line.find(k_echo); at != std::string_view::npos) {
      std::string object(line.substr(at + k_echo.size()));
      object.erase(object.find_last_not_of("\"' \t\r") + 1);
      auto source = sources.find(object);
      compiles.push_back({graph_path(object, run_dir), source != sources.end()
                                                         ? graph_path(source->second, run_dir)
                                                         : std::string()});
      continue;
    }
    const size_t colon = line.find(": ");
    if (line.empty() || line[0] == '\t' || line[0] == '#' || colon == std::string_view::npos) {
      continue;
    }
    const std::string prerequisite(line.substr(colon + 2));
    const bool cmake_file = prerequisite.ends_with(".make") || prerequisite.ends_with(".rsp") ||
                            prerequisite.ends_with(".ts") ||
                            prerequisite.find('$') != std::string::npos;
    if (!cmake_file && !prerequisite.empty()) {
      sources[std::string(line.substr(0, colon))] = prerequisite;
    }
  }
  return compiles;
}

namespace {

// One target's link.txt and dlink.txt (its device link, CUDA_SEPARABLE_COMPILATION or
// CUDA_RESOLVE_DEVICE_SYMBOLS) and the CUDA compiles of its build.make.
void add_make_target(const fs::path& target_dir, BuildGraph& graph)
{
  std::string run_dir = target_dir.parent_path().parent_path().string();
  std::string target = target_dir.stem().string();
  for (const char* commands : {"dlink.txt", "link.txt"}) {
    if (auto text = try_read_file((target_dir / commands).string())) {
      for (auto& edge : parse_make_link_commands(*text, run_dir, target)) {
        add_or_merge(graph, std::move(edge));
      }
    }
  }
  if (auto text = try_read_file((target_dir / "build.make").string())) {
    for (auto& compile : parse_make_cuda_compiles(*text, run_dir)) {
      graph.cuda_compiles.push_back(std::move(compile));
    }
    const auto prerequisites = parse_make_prerequisites(*text, run_dir);
    for (auto& edge : graph.edges) {
      if (auto found = prerequisites.find(edge.artifact); found != prerequisites.end()) {
        edge.dependencies = found->second;
        edge.dependencies_known = true;
      }
    }
  }
}

}  // namespace

BuildGraph load_make_graph(const std::string& build_dir)
{
  BuildGraph graph;
  graph.generator = "make";
  std::error_code error;
  fs::recursive_directory_iterator it(build_dir, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const fs::path& path = it->path();
    if (!it->is_directory(error)) {
      continue;
    }
    std::string name = path.filename().string();
    if (name == ".nvfresh" || name == ".git") {
      it.disable_recursion_pending();
    } else if (name.ends_with(".dir") && path.parent_path().filename() == "CMakeFiles") {
      add_make_target(path, graph);
      it.disable_recursion_pending();
    }
  }
  keep_known_libraries(graph);
  return graph;
}

}  // namespace nvfresh
