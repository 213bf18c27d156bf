#include "space/tree_size.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <sys/stat.h>

using namespace nvfresh;

namespace {

std::uint64_t allocated(const std::string& path)
{
  struct stat st {};
  ::lstat(path.c_str(), &st);
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace

TEST_CASE("a tree's size counts allocated blocks, hard links once, symlinks as links",
          "[tree_size]")
{
  test::TempDir dir;
  std::string big = dir.write("tree/sub/big.o", std::string(300'000, 'x'));
  dir.write("tree/small.o", "y");
  std::filesystem::create_hard_link(big, dir.path("tree/big-again.o"));
  std::string outside = dir.write("outside/huge", std::string(2'000'000, 'z'));
  std::filesystem::create_symlink(outside, dir.path("tree/link"));
  std::filesystem::create_directory_symlink(dir.path("outside"), dir.path("tree/dirlink"));

  std::uint64_t expected = 0;
  for (const char* path :
       {"tree", "tree/sub", "tree/sub/big.o", "tree/small.o", "tree/link", "tree/dirlink"}) {
    expected += allocated(dir.path(path));
  }
  TreeSize size = measure_tree(dir.path("tree"));
  CHECK(size.exists);
  CHECK(size.bytes == expected);
  CHECK(size.bytes >= 300'000);
  CHECK(size.bytes < 2'000'000);
  CHECK(size.entries ==
        6);  // the top, sub, two files (the second name of big.o is not counted), two links
  CHECK(size.mount_inside.empty());
  CHECK(size.unreadable.empty());
  CHECK_FALSE(measure_tree(dir.path("missing")).exists);
}

TEST_CASE("sizing reports progress as it goes", "[tree_size]")
{
  test::TempDir dir;
  for (int i = 0; i < 5000; ++i) {
    dir.write("tree/f" + std::to_string(i), "");
  }
  int calls = 0;
  measure_tree(dir.path("tree"), [&](const TreeSize& so_far) {
    ++calls;
    CHECK(so_far.entries % k_size_progress_entries == 0);
  });
  CHECK(calls == 1);
}
