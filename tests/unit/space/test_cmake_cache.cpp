#include "space/cmake_cache.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

// A build tree `build` configured from `source`, as cmake writes it (CMAKE_CACHEFILE_DIR = the tree).
void configure(const test::TempDir& dir, const std::string& source, const std::string& build,
               const std::string& cache_dir = "")
{
  dir.write(build + "/CMakeCache.txt",
            "# This is the CMakeCache file.\n//Source directory\nCMAKE_HOME_DIRECTORY:INTERNAL=" +
              dir.path(source) + "\nCMAKE_CACHEFILE_DIR:INTERNAL=" +
              (cache_dir.empty() ? dir.path(build) : cache_dir) + "\n");
}

}  // namespace

TEST_CASE("CMakeCache.txt: the source dir and the tree it was written for", "[cmake_cache]")
{
  auto facts = parse_cmake_cache(
    "// comment\n# another\nCMAKE_HOME_DIRECTORY:INTERNAL=/src/p\r\n"
    "CMAKE_CACHEFILE_DIR:INTERNAL=/b\nCMAKE_HOME_DIRECTORY_X:STRING=/no\nbroken line\n");
  CHECK(facts.home_directory == "/src/p");
  CHECK(facts.cache_directory == "/b");
  CHECK(parse_cmake_cache("").home_directory.empty());
  CHECK(parse_cmake_cache("CMAKE_HOME_DIRECTORY=/untyped").home_directory == "/untyped");
}

TEST_CASE("regenerable: the cache is this tree's, and its source dir exists with a CMakeLists.txt "
          "outside it",
          "[cmake_cache]")
{
  test::TempDir dir;
  dir.write("src/CMakeLists.txt", "project(p)\n");
  configure(dir, "src", "build");
  TreeOrigin origin = classify_tree(dir.path("build"));
  CHECK(origin.regenerable);
  CHECK(origin.reason.empty());
  CHECK(origin.source_dir == dir.path("src"));

  configure(dir, "src", "src/build");  // a build dir inside the sources is fine
  CHECK(classify_tree(dir.path("src/build")).regenerable);
}

TEST_CASE("anything else is ambiguous, with the reason", "[cmake_cache]")
{
  test::TempDir dir;
  dir.write("src/CMakeLists.txt", "project(p)\n");
  dir.write("empty/readme", "");
  std::filesystem::create_directories(dir.path("plain"));
  configure(dir, "gone", "b_gone");
  configure(dir, "empty", "b_empty");
  configure(dir, "src", "b_copy", dir.path("elsewhere"));
  configure(dir, "src", "src");  // in-source: removing the tree removes the sources
  dir.write("b_nohome/CMakeCache.txt",
            "CMAKE_CACHEFILE_DIR:INTERNAL=" + dir.path("b_nohome") + "\n");
  const std::pair<const char*, const char*> cases[] = {
    {"plain", "no CMakeCache.txt"},
    {"missing", "it is gone"},
    {"b_gone", "source dir "},
    {"b_empty", "holds no CMakeLists.txt"},
    {"b_copy", "a moved or copied tree"},
    {"src", "an in-source build"},
    {"b_nohome", "names no source dir"},
  };
  for (const auto& [tree, reason] : cases) {
    INFO(tree);
    TreeOrigin origin = classify_tree(dir.path(tree));
    CHECK_FALSE(origin.regenerable);
    CHECK_THAT(origin.reason, Catch::Contains(reason));
  }
  CHECK_THAT(classify_tree(dir.path("b_gone")).reason, Catch::EndsWith("is gone"));
}

TEST_CASE("CMakeCache.txt: the generator, the build tool, nvcc and -ccbin", "[cmake_cache]")
{
  auto facts =
    parse_cmake_cache("CMAKE_GENERATOR:INTERNAL=Ninja\nCMAKE_MAKE_PROGRAM:FILEPATH=/usr/bin/ninja\n"
                      "CMAKE_CUDA_COMPILER:FILEPATH=/usr/local/cuda/bin/nvcc\n"
                      "CMAKE_CUDA_HOST_COMPILER:FILEPATH=/opt/g++\n");
  CHECK(facts.generator == "Ninja");
  CHECK(facts.make_program == "/usr/bin/ninja");
  CHECK(facts.cuda_compiler == "/usr/local/cuda/bin/nvcc");
  CHECK(facts.cuda_host_compiler == "/opt/g++");
}
