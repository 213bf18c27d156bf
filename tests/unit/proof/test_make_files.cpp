#include "proof/make_files.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

TEST_CASE("make link.txt lines: linker driver, ar, ranlib, response files, launcher prefix",
          "[make_files]")
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

TEST_CASE("make dlink.txt: nvcc's options files are expanded as nvcc expands them", "[make_files]")
{
  test::TempDir dir;
  dir.write("CMakeFiles/t.dir/deviceObjects1",
            "CMakeFiles/t.dir/a.cu.o \"CMakeFiles/t.dir/b c.cu.o\" -optf=CMakeFiles/t.dir/more\n");
  dir.write("CMakeFiles/t.dir/more", "CMakeFiles/t.dir/d.cu.o\n");
  dir.write("CMakeFiles/t.dir/deviceLinkLibs.rsp", "-lcudadevrt -lcudart_static\n");
  const std::string dlink =
    "/x/nvfresh link-record -- /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler "
    "-Xcompiler=-fPIC -Wno-deprecated-gpu-targets -shared -dlink --options-file "
    "CMakeFiles/t.dir/deviceObjects1 -o CMakeFiles/t.dir/cmake_device_link.o "
    "--options-file=CMakeFiles/t.dir/deviceLinkLibs.rsp\n";
  auto edges = parse_make_link_commands(dlink, dir.path(), "t");
  REQUIRE(edges.size() == 1);
  CHECK(edges[0].artifact == dir.path("CMakeFiles/t.dir/cmake_device_link.o"));
  CHECK(edges[0].kind == ArtifactKind::object);
  CHECK(edges[0].objects == std::vector<std::string>{dir.path("CMakeFiles/t.dir/a.cu.o"),
                                                     dir.path("CMakeFiles/t.dir/b c.cu.o"),
                                                     dir.path("CMakeFiles/t.dir/d.cu.o")});
  SECTION("an options file that cannot be read leaves nvcc's words as they are")
  {
    auto missing = parse_make_link_commands(
      "/usr/local/cuda/bin/nvcc -dlink --options-file gone.rsp a.o -o dl.o\n", dir.path(), "t");
    REQUIRE(missing.size() == 1);
    CHECK(missing[0].objects == std::vector<std::string>{dir.path("a.o")});
    CHECK(missing[0].libraries == std::vector<std::string>{dir.path("gone.rsp")});
  }
}
