#include "space/registry.hpp"
#include "temp_dir.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace nvfresh;

TEST_CASE("the registry lives in the user's state dir", "[registry]")
{
  CHECK(registry_dir({{"XDG_STATE_HOME", "/s"}, {"HOME", "/h"}}) == "/s/nvfresh/trees");
  CHECK(registry_dir({{"HOME", "/h"}}) == "/h/.local/state/nvfresh/trees");
  CHECK(registry_dir({{"XDG_STATE_HOME", "relative"}, {"HOME", "/h"}}) ==
        "/h/.local/state/nvfresh/trees");
  CHECK(registry_dir({}).empty());
  CHECK(registry_file_for("/r", "/a/build") != registry_file_for("/r", "/b/build"));
  CHECK_THAT(registry_file_for("/r", "/a/build"),
             Catch::StartsWith("/r/build-") && Catch::EndsWith(".tree"));
}

TEST_CASE("an entry reads back what was written, any byte in its paths", "[registry]")
{
  RegistryEntry entry{"/b/with\ttab", "/b/with\ttab/.nvfresh", "/src/new\nline", "", 0};
  std::string error;
  auto parsed = parse_registry_entry(serialize_registry_entry(entry), &error);
  REQUIRE(parsed);
  CHECK(parsed->tree == entry.tree);
  CHECK(parsed->record_root == entry.record_root);
  CHECK(parsed->source_dir == entry.source_dir);
  CHECK(
    parse_registry_entry("nvfresh-tree\t1\ntree\t/b\nrecords\t/b/.nvfresh\nlater\tkey\n", &error));
}

TEST_CASE("entries that do not parse are refused with a reason", "[registry]")
{
  for (const char* bad :
       {"", "nvfresh-tree\t2\ntree\t/b\nrecords\t/r\n", "nvfresh-tree\t1\ntree\t/b\n",
        "nvfresh-tree\t1\ntree\trelative\nrecords\t/r\n",
        "nvfresh-tree\t1\ntree\t/b\\q\nrecords\t/r\n", "nvfresh-tree\t1\nno tab here\n"}) {
    std::string error;
    INFO(bad);
    CHECK_FALSE(parse_registry_entry(bad, &error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("register_tree writes an entry once and refreshes it only when it is old", "[registry]")
{
  test::TempDir dir;
  dir.write("build/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=/src/p\n");
  const std::string registry = dir.path("state/nvfresh/trees");
  const std::string tree = dir.path("build");
  const std::int64_t now = now_ns();
  register_tree(registry, tree, tree + "/.nvfresh", now);
  auto entries = list_registry(registry);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].tree == tree);
  CHECK(entries[0].source_dir == "/src/p");
  CHECK(entries[0].file == registry_file_for(registry, tree));

  // Recent: not rewritten (one stat), even when what it would write changed.
  const std::int64_t recent = now - k_registry_refresh_ns / 2;
  set_mtime_ns(entries[0].file, recent);
  register_tree(registry, tree, "/elsewhere", now);
  CHECK(list_registry(registry)[0].record_root == tree + "/.nvfresh");
  CHECK(stat_file(entries[0].file).mtime_ns == recent);

  // Old: rewritten.
  set_mtime_ns(entries[0].file, now - 2 * k_registry_refresh_ns);
  register_tree(registry, tree, "/elsewhere", now);
  CHECK(list_registry(registry)[0].record_root == "/elsewhere");

  register_tree("", tree, tree + "/.nvfresh", now);  // no state dir: nothing, no error
}

TEST_CASE("listing skips what is not an entry; unregistering removes one", "[registry]")
{
  test::TempDir dir;
  const std::string registry = dir.path("trees");
  register_tree(registry, "/a", "/a/.nvfresh", now_ns());
  register_tree(registry, "/b", "/b/.nvfresh", now_ns());
  dir.write("trees/junk.tree", "not an entry\n");
  dir.write("trees/notes.txt", "nvfresh-tree\t1\ntree\t/c\nrecords\t/c/.nvfresh\n");
  std::filesystem::create_directories(dir.path("trees/dir.tree"));
  auto entries = list_registry(registry);
  REQUIRE(entries.size() == 2);
  unregister_tree(entries[0]);
  REQUIRE(list_registry(registry).size() == 1);
  CHECK(list_registry(dir.path("none")).empty());
}
