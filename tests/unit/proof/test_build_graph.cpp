#include "proof/build_graph.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

LinkEdge edge(std::string artifact, std::string target, std::vector<std::string> objects,
              std::vector<std::string> libraries)
{
  LinkEdge e;
  e.artifact = std::move(artifact);
  e.target = std::move(target);
  e.objects = std::move(objects);
  e.libraries = std::move(libraries);
  return e;
}

// An executable linking a shared and a static library, and an executable linking nothing.
BuildGraph sample_graph()
{
  BuildGraph graph;
  graph.generator = "ninja";
  graph.edges = {edge("/b/libprov.so", "prov", {"/b/CMakeFiles/prov.dir/a.cu.o"}, {}),
                 edge("/b/libst.a", "st", {"/b/CMakeFiles/st.dir/a.cu.o"}, {}),
                 edge("/b/sub/u", "u", {"/b/sub/CMakeFiles/u.dir/main.cpp.o"},
                      {"/b/libprov.so", "/b/libst.a", "/usr/lib/libm.so"}),
                 edge("/b/t", "t", {"/b/CMakeFiles/t.dir/main.cpp.o"}, {})};
  return graph;
}

}  // namespace

TEST_CASE("linked_closure and containing answer who pulls in what", "[build_graph]")
{
  BuildGraph graph = sample_graph();
  keep_known_libraries(graph);
  CHECK(graph.find("u")->libraries == std::vector<std::string>{"/b/libprov.so", "/b/libst.a"});
  CHECK(graph.linked_closure("/b/sub/u") ==
        std::vector<std::string>{"/b/libprov.so", "/b/libst.a"});
  CHECK(graph.linked_closure("/b/t").empty());
  auto holders = graph.containing("/b/CMakeFiles/prov.dir/a.cu.o");
  REQUIRE(holders.size() == 1);
  CHECK(holders[0]->artifact == "/b/libprov.so");
}

TEST_CASE("find takes a path, a target name or a file name", "[build_graph]")
{
  const BuildGraph graph = sample_graph();
  REQUIRE(graph.find("/b/libst.a") != nullptr);
  CHECK(graph.find("/b/libst.a")->target == "st");
  CHECK(graph.find("prov")->artifact == "/b/libprov.so");
  CHECK(graph.find("libprov.so")->artifact == "/b/libprov.so");
  CHECK(graph.find("nothing") == nullptr);
}
