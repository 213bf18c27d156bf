#include "proof/build_graph.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

// Abridged from CMake 3.25's build.ninja for a shared library, a static library and executables.
constexpr const char* k_ninja = R"(
build CMakeFiles/prov.dir/a.cu.o: CUDA_COMPILER__prov_unscanned_ /s/a.cu || cmake_object_order_depends_target_prov
build libprov.so: CUDA_SHARED_LIBRARY_LINKER__prov_ CMakeFiles/prov.dir/a.cu.o CMakeFiles/prov.dir/b$ c.cu.o
  LANGUAGE_COMPILE_FLAGS =
build libst.a: CUDA_STATIC_LIBRARY_LINKER__st_ CMakeFiles/st.dir/a.cu.o
build sub/u: CXX_EXECUTABLE_LINKER__u_ sub/CMakeFiles/u.dir/main.cpp.o | libprov.so $
    libst.a || libprov.so libst.a
build t: CXX_EXECUTABLE_LINKER__t_ CMakeFiles/t.dir/main.cpp.o
build prov: phony libprov.so
build st: phony libst.a
build u: phony sub/u
)";

}  // namespace

TEST_CASE("ninja link edges give artifacts, objects, libraries and target names", "[build_graph]")
{
  BuildGraph graph = parse_ninja_manifest(k_ninja, "/b");
  REQUIRE(graph.edges.size() == 4);
  const LinkEdge* prov = graph.find("prov");
  REQUIRE(prov != nullptr);
  CHECK(prov->artifact == "/b/libprov.so");
  CHECK(prov->kind == ArtifactKind::shared_library);
  CHECK(prov->objects == std::vector<std::string>{"/b/CMakeFiles/prov.dir/a.cu.o",
                                                  "/b/CMakeFiles/prov.dir/b c.cu.o"});
  const LinkEdge* u = graph.find("u");
  REQUIRE(u != nullptr);
  CHECK(u->artifact == "/b/sub/u");
  CHECK(u->kind == ArtifactKind::executable);
  CHECK(u->libraries == std::vector<std::string>{"/b/libprov.so", "/b/libst.a"});
  CHECK(graph.find("st")->kind == ArtifactKind::static_library);
  CHECK(graph.find("t")->libraries.empty());
}

TEST_CASE("linked_closure and containing answer who pulls in what", "[build_graph]")
{
  BuildGraph graph = parse_ninja_manifest(k_ninja, "/b");
  CHECK(graph.linked_closure("/b/sub/u") ==
        std::vector<std::string>{"/b/libprov.so", "/b/libst.a"});
  CHECK(graph.linked_closure("/b/t").empty());
  auto holders = graph.containing("/b/CMakeFiles/prov.dir/a.cu.o");
  REQUIRE(holders.size() == 1);
  CHECK(holders[0]->artifact == "/b/libprov.so");
}

TEST_CASE("make link.txt lines: linker driver, ar, ranlib, response files, launcher prefix",
          "[build_graph]")
{
  test::TempDir dir;
  dir.write("CMakeFiles/prov.dir/objects1",
            "CMakeFiles/prov.dir/a.cu.o \"CMakeFiles/prov.dir/b c.cu.o\"\n");
  std::string link = "/x/nvfresh link-record -- /usr/bin/g++ -fPIC -shared -Wl,-soname,libprov.so "
                     "-o libprov.so @CMakeFiles/prov.dir/objects1 -L\"/usr/local/cuda/lib\"\n";
  auto edges = parse_make_link_commands(link, dir.path(), "prov");
  REQUIRE(edges.size() == 1);
  CHECK(edges[0].artifact == dir.path("libprov.so"));
  CHECK(edges[0].kind == ArtifactKind::shared_library);
  CHECK(edges[0].target == "prov");
  CHECK(edges[0].objects == std::vector<std::string>{dir.path("CMakeFiles/prov.dir/a.cu.o"),
                                                     dir.path("CMakeFiles/prov.dir/b c.cu.o")});
  auto archive = parse_make_link_commands("/usr/bin/ar qc libst.a CMakeFiles/st.dir/a.cu.o\n"
                                          "/usr/bin/ranlib libst.a\n",
                                          "/b", "st");
  REQUIRE(archive.size() == 1);
  CHECK(archive[0].kind == ArtifactKind::static_library);
  CHECK(archive[0].artifact == "/b/libst.a");
  CHECK(archive[0].objects == std::vector<std::string>{"/b/CMakeFiles/st.dir/a.cu.o"});
}

TEST_CASE("split_command_line follows the shell's quoting", "[build_graph]")
{
  CHECK(split_command_line(R"(a "b c" 'd e' f\ g -L"/x y")") ==
        std::vector<std::string>{"a", "b c", "d e", "f g", "-L/x y"});
  CHECK(split_command_line("  ").empty());
}

TEST_CASE("an executable link names its output and other file operands", "[build_graph]")
{
  auto edge = describe_link_command(
    {"/usr/bin/c++", "main.o", "-o", "t", "-Wl,-rpath,/b", "libp.so", "-ldl"}, "/b");
  REQUIRE(edge);
  CHECK(edge->artifact == "/b/t");
  CHECK(edge->kind == ArtifactKind::executable);
  CHECK(edge->objects == std::vector<std::string>{"/b/main.o"});
  CHECK(edge->libraries == std::vector<std::string>{"/b/libp.so"});
  CHECK_FALSE(describe_link_command({"/usr/bin/cmake", "-E", "rm", "-f", "libst.a"}, "/b"));
}

TEST_CASE("a compile through a link launcher is not a link", "[build_graph]")
{
  // torch's JIT build.ninja runs its C++ compiles and its link with the same $cxx.
  CHECK_FALSE(describe_link_command(
    {"c++", "-MMD", "-MF", "main.o.d", "-c", "main.cpp", "-o", "main.o"}, "/b"));
  CHECK_FALSE(describe_link_command({"c++", "-S", "main.cpp", "-o", "main.s"}, "/b"));
  CHECK_FALSE(describe_link_command({"c++", "-E", "main.cpp", "-o", "main.i"}, "/b"));
  auto edge = describe_link_command(
    {"c++", "main.o", "cuda.cuda.o", "-shared", "-L/t/lib", "-lc10", "-o", "ext.so"}, "/b");
  REQUIRE(edge);
  CHECK(edge->kind == ArtifactKind::shared_library);
  CHECK(edge->objects == std::vector<std::string>{"/b/main.o", "/b/cuda.cuda.o"});
}
