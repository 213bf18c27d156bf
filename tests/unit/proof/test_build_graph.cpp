#include "proof/build_graph.hpp"
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
