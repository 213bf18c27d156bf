#include "freshness/race_rule.hpp"
#include "temp_dir.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"
#include "util/hasher.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace nvfresh;

namespace {

// What a lookup records for a file: its stamp as stat says now, and the hash of `seen`.
RecordedInput looked_at(const std::string& path, const std::string& seen)
{
  const FileStat st = stat_file(path);
  RecordedInput input;
  input.file = {path, hash_bytes(seen), st.size, st.mtime_ns, st.ctime_ns, st.inode};
  return input;
}

}  // namespace

TEST_CASE("first_input_written_since: files older than the start clear at once", "[race_rule]")
{
  test::TempDir dir;
  const auto a = dir.write("a.h", "int a;\n");
  const auto b = dir.write("b.h", "int b;\n");
  set_mtime_ns(a, now_ns() - 10 * k_one_second_ns);
  const std::vector<RecordedInput> inputs{looked_at(a, "int a;\n"), looked_at(b, "int b;\n")};
  const std::int64_t start = wait_for_coarse_after(now_ns());  // after both ctimes
  CHECK_FALSE(first_input_written_since(inputs, start));
}

TEST_CASE("first_input_written_since: a file written in the start's tick clears by its content",
          "[race_rule]")
{
  test::TempDir dir;
  const std::int64_t start = coarse_now_ns();
  const auto header = dir.write("generated.h", "int generated;\n");  // ctime >= start, likely
  SECTION("the content the lookup saw: not raced (the generated-header case)")
  {
    CHECK_FALSE(first_input_written_since({looked_at(header, "int generated;\n")}, start));
  }
  SECTION("a same-size rewrite that kept the stamp: raced")
  {
    // The lookup saw other bytes of the same size under the same stamp: what a rewrite within one
    // clock tick looks like.
    CHECK(first_input_written_since({looked_at(header, "int GENERATED;\n")}, start) == header);
  }
}

TEST_CASE("first_input_written_since: a moved stamp or a removed file is written since",
          "[race_rule]")
{
  test::TempDir dir;
  const auto a = dir.write("a.h", "int a;\n");
  const auto b = dir.write("b.h", "int b;\n");
  const std::vector<RecordedInput> inputs{looked_at(a, "int a;\n"), looked_at(b, "int b;\n")};
  const std::int64_t start = wait_for_coarse_after(now_ns());
  SECTION("rewritten")
  {
    wait_for_coarse_after(now_ns());
    dir.write("b.h", "int bb;\n");
    CHECK(first_input_written_since(inputs, start) == b);
  }
  SECTION("touched")
  {
    set_mtime_ns(a, stat_file(a).mtime_ns + k_one_second_ns);
    CHECK(first_input_written_since(inputs, start) == a);
  }
  SECTION("removed")
  {
    std::filesystem::remove(a);
    CHECK(first_input_written_since(inputs, start) == a);
  }
}
