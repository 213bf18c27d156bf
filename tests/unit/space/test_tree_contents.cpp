#include "space/tree_contents.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_built = 1'700'000'000LL * 1'000'000'000;

// A build tree as CMake and a build leave it, every file dated at its last build.
void write_build_tree(const test::TempDir& dir)
{
  for (const char* file : {"b/CMakeCache.txt", "b/build.ninja", "b/CMakeFiles/app.dir/a.cu.o",
                           "b/.nvfresh/events.log", "b/app"}) {
    dir.write(file, "x");
    set_mtime_ns(dir.path(file), k_built);
  }
}

}  // namespace

TEST_CASE("tree_contents: a tree holding only what a build makes", "[tree_contents]")
{
  test::TempDir dir;
  write_build_tree(dir);
  CHECK(find_foreign_content(dir.path("b"), dir.path("b/.nvfresh"), k_built).empty());
  // A file written a little after the last build noted (a link, the last step) is the build's.
  set_mtime_ns(dir.path("b/app"), k_built + k_changed_margin_ns);
  CHECK(find_foreign_content(dir.path("b"), dir.path("b/.nvfresh"), k_built).empty());
  // nvfresh's own store is nvfresh's: `space` itself creates the build lock there.
  dir.write("b/.nvfresh/build.lock", "");
  CHECK(find_foreign_content(dir.path("b"), dir.path("b/.nvfresh"), k_built).empty());
}

TEST_CASE("tree_contents: what no build makes is named", "[tree_contents]")
{
  struct Case {
    const char* file;
    const char* found;
  };
  const Case cases[] = {
    {"b/work/.git/HEAD", "a git checkout (@/b/work/.git)"},
    {"b/.git", "a git checkout (@/b/.git)"},
    {"b/x/y/.hg/store", "a Mercurial checkout (@/b/x/y/.hg)"},
    {"b/w/.svn/wc.db", "a Subversion checkout (@/b/w/.svn)"},
    {"b/vendor/lib/CMakeLists.txt", "a source tree (@/b/vendor/lib/CMakeLists.txt)"},
    {"b/asan/CMakeCache.txt", "another build tree (@/b/asan/CMakeCache.txt)"},
    {"b/notes.txt", "@/b/notes.txt, changed after its last build"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    test::TempDir dir;
    write_build_tree(dir);
    dir.write(c.file, "mine");
    if (std::string(c.file).find("notes") == std::string::npos) {
      set_mtime_ns(dir.path(c.file), k_built);
    }
    std::string expected = c.found;
    expected.replace(expected.find('@'), 1, dir.path());
    CHECK(find_foreign_content(dir.path("b"), dir.path("b/.nvfresh"), k_built) == expected);
  }
  test::TempDir dir;
  CHECK_THAT(find_foreign_content(dir.path("none"), dir.path("none/.nvfresh"), k_built),
             Catch::Contains("cannot be read"));
}
