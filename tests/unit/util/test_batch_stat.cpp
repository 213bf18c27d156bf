#include "util/batch_stat.hpp"

#include "../temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

namespace {

bool same(const FileStat& a, const FileStat& b)
{
  return a.exists == b.exists && a.is_regular == b.is_regular && a.is_directory == b.is_directory &&
         (!a.exists || a.same_content_stamp(b));
}

}  // namespace

// Files, symlinks, a symlinked directory, missing files and directories, a path under a file,
// "..", a trailing '/', relative paths (from inc/), the root.
struct StatTree {
  test::TempDir dir;
  std::vector<std::string> names;
  StatTree()
  {
    dir.write("inc/a.h", "a");
    dir.write("inc/b.h", "bb");
    dir.write("inc/sub/c.h", "ccc");
    dir.write("other/d.h", "dddd");
    std::filesystem::create_symlink(dir.path("inc/a.h"), dir.path("inc/link.h"));
    std::filesystem::create_directory_symlink(dir.path("inc"), dir.path("linked"));
    std::filesystem::create_symlink(dir.path("nowhere.h"), dir.path("inc/dangling.h"));
    dir.write("inc/sub/deeper/e.h", "eeeee");
    std::filesystem::create_directory_symlink("../../other", dir.path("inc/sub/up"));
    names = {
      dir.path("inc/a.h"), dir.path("inc/b.h"), dir.path("inc/missing.h"), dir.path("inc/sub/c.h"),
      dir.path("inc/sub/../b.h"), dir.path("inc/link.h"), dir.path("inc/dangling.h"),
      dir.path("linked/a.h"), dir.path("linked/b.h"), dir.path("gone/x.h"), dir.path("gone/y.h"),
      dir.path("inc/a.h/z.h"), dir.path("inc/a.h/w.h"), dir.path("inc/"), dir.path("other/d.h"),
      "a.h", "b.h", "sub/c.h", "/", "/usr", dir.path("inc/sub"),
      // directories below open ones, opened from them: through a relative symlink, "..",
      // a missing one
      dir.path("inc/sub/missing.h"), dir.path("inc/sub/deeper/e.h"), dir.path("inc/sub/deeper/f.h"),
      dir.path("inc/sub/up/d.h"), dir.path("inc/sub/up/none.h"), dir.path("inc/sub/up/../inc/a.h"),
      dir.path("inc/sub/up/../inc/b.h"), dir.path("inc/sub/deeper/../c.h"),
      dir.path("inc/sub/deeper/../deeper/e.h"), dir.path("inc/sub/gone/a.h"),
      dir.path("inc/sub/gone/b.h"), dir.path("inc-x/a.h"), dir.path("inc-x/b.h")};
  }
  std::vector<FileStat> stat_all(const BatchStatLimits& limits) const
  {
    std::vector<const std::string*> paths;
    paths.reserve(names.size());
    for (const auto& name : names) {
      paths.push_back(&name);
    }
    const std::string cwd = std::filesystem::current_path().string();
    std::filesystem::current_path(dir.path("inc"));
    std::vector<FileStat> stats = stat_files(paths, limits);
    std::filesystem::current_path(cwd);
    return stats;
  }
  FileStat stat_one(size_t i) const
  {
    return stat_file(names[i][0] == '/' ? names[i] : dir.path("inc/" + names[i]));
  }
};

TEST_CASE("stat_files: the answers stat() gives, for every kind of path", "[stat]")
{
  const StatTree tree;
  BatchStatLimits limits;
  SECTION("one thread, every directory open") {}
  SECTION("a thread per path")
  {
    limits.per_thread = 1;
  }
  SECTION("one directory open, the others by path")
  {
    limits.max_directories = 1;
  }
  SECTION("no directory open")
  {
    limits.max_directories = 0;
  }
  const std::vector<FileStat> stats = tree.stat_all(limits);
  REQUIRE(stats.size() == tree.names.size());
  for (size_t i = 0; i < stats.size(); ++i) {
    INFO(tree.names[i]);
    CHECK(same(stats[i], tree.stat_one(i)));
  }
}

TEST_CASE("stat_files: symlinks followed, '..' resolved, absent paths absent", "[stat]")
{
  const StatTree tree;
  const std::vector<FileStat> stats = tree.stat_all({});
  CHECK(stats[0].size == 1);
  CHECK(stats[4].size == 2);  // inc/sub/../b.h
  CHECK(stats[5].size == 1);  // through the symlink
  CHECK_FALSE(stats[6].exists);
  CHECK(stats[7].size == 1);  // through the symlinked directory
  CHECK_FALSE(stats[9].exists);
  CHECK_FALSE(stats[11].exists);  // under a file
  CHECK(stats[13].is_directory);
  CHECK(stats[17].size == 3);
  CHECK(stats[22].size == 5);  // inc/sub/deeper/e.h
  CHECK(stats[24].size == 4);  // inc/sub/up/d.h: the symlink, relative to inc/sub
  CHECK(stats[26].size == 1);  // inc/sub/up/../inc/a.h: ".." of other/ (not inc/sub/inc/a.h)
  CHECK(stats[28].size == 3);  // inc/sub/deeper/../c.h
}

TEST_CASE("stat_files: no paths, no work", "[stat]")
{
  CHECK(stat_files({}).empty());
}
