#include "proof/ninja_manifest.hpp"

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

TEST_CASE("ninja link edges give artifacts, objects, libraries and target names",
          "[ninja_manifest]")
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
