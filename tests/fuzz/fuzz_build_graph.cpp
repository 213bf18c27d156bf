// libFuzzer target for lib/proof's readers (ninja_manifest, make_files, link_command, build_graph):
// the generator files `check` reads to know which artifact links which objects, as one input
// parsed both ways,
//   build.ninja text (parse_ninja_manifest), and
//   a Makefiles link.txt or dlink.txt (parse_make_link_commands) whose "@objects1.rsp" (or nvcc's
//   "--options-file objects1.rsp") names a response file, and
//   a Makefiles build.make (parse_make_cuda_compiles),
// with the layout  <manifest, link.txt or build.make> [0x01 <body of objects1.rsp>].
// Properties: no parser crashes; every edge and compile names absolute, lexically normal paths; a
// Ninja graph keeps only libraries that are other artifacts of the graph; linked_closure ends
// (the graph may have cycles) and names only artifacts of the graph.
// Seeds: tests/fuzz/corpus/build_graph (build.ninja, link.txt, dlink.txt and build.make files of
// real CMake builds).
#include "fuzz_support.hpp"
#include "proof/build_graph.hpp"
#include "proof/make_files.hpp"
#include "proof/ninja_manifest.hpp"
#include "util/file_io.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace {

constexpr std::size_t k_max_closure_edges = 32;  // linked_closure stats paths: keep runs fast

bool absolute_and_normal(const std::string& path)
{
  return !path.empty() && path.front() == '/' && nvfresh::lexically_normal(path) == path;
}

void check_edges(const std::vector<nvfresh::LinkEdge>& edges)
{
  for (const nvfresh::LinkEdge& edge : edges) {
    if (!absolute_and_normal(edge.artifact)) {
      nvfresh::fuzz::fail("an edge's artifact is absolute and lexically normal");
    }
  }
}

void check_compiles(const std::vector<nvfresh::CompileEdge>& compiles)
{
  for (const nvfresh::CompileEdge& compile : compiles) {
    if (!absolute_and_normal(compile.object) ||
        (!compile.source.empty() && !absolute_and_normal(compile.source))) {
      nvfresh::fuzz::fail("a compile names an absolute, lexically normal object and source");
    }
  }
}

void check_graph(const nvfresh::BuildGraph& graph)
{
  check_edges(graph.edges);
  check_compiles(graph.cuda_compiles);
  std::set<std::string> artifacts;
  for (const nvfresh::LinkEdge& edge : graph.edges) {
    artifacts.insert(edge.artifact);
  }
  for (const nvfresh::LinkEdge& edge : graph.edges) {
    for (const std::string& library : edge.libraries) {
      if (library == edge.artifact || !artifacts.contains(library)) {
        nvfresh::fuzz::fail("a graph's edges link only other artifacts of the graph");
      }
    }
  }
  if (graph.edges.size() > k_max_closure_edges) {
    return;
  }
  for (const nvfresh::LinkEdge& edge : graph.edges) {
    for (const std::string& linked : graph.linked_closure(edge.artifact)) {
      if (!artifacts.contains(linked)) {
        nvfresh::fuzz::fail("linked_closure names only artifacts of the graph");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::vector<std::string_view> parts =
    nvfresh::fuzz::split_parts(nvfresh::fuzz::as_text(data, size), '\x01');
  const nvfresh::fuzz::ScratchDir& dir = nvfresh::fuzz::ScratchDir::get();
  dir.write("objects1.rsp", parts.size() > 1 ? parts[1] : std::string_view());

  check_graph(nvfresh::parse_ninja_manifest(parts[0], "/build/tree"));
  check_edges(nvfresh::parse_make_link_commands(parts[0], dir.path(), "target"));
  check_compiles(nvfresh::parse_make_cuda_compiles(parts[0], dir.path()));
  return 0;
}
