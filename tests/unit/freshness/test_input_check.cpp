#include "freshness/input_check.hpp"
#include "temp_dir.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include <unistd.h>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_second = 1'000'000'000;

// A compile whose inputs and probes are in a temporary directory. The "compile" is taken to start
// two seconds from now, so that the directories made here count as older than it (a directory's
// ctime cannot be set back).
struct Compile {
  test::TempDir dir;
  Record record;
  std::int64_t start_ns = now_ns() + 2 * k_second;

  Compile()
  {
    FileHasher hasher;
    const std::string header = dir.write("inc1/cfg.h", "#define TILE 64\n");
    std::filesystem::create_directories(dir.path("inc0"));
    record.inputs.push_back({*hasher.fingerprint(header).fingerprint, InputRole::header, {}});
    record.probes = group_probes(
      {dir.path("inc0/cfg.h"), dir.path("inc0/has_include.h"), dir.path("gone/cfg.h")});
  }
  void stamp() { record.probe_dirs = stamp_probe_directories(record.probes, start_ns); }
  std::vector<StaleReason> changes(LookupCheck mode = LookupCheck::every_change)
  {
    FileHasher hasher;
    return changed_lookups(RecordedLookups::of(record), hasher, mode);
  }
};

// The check finds one change: the probe `found` now resolves.
void require_only_probe_found(Compile& c, const std::string& found)
{
  auto changes = c.changes();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].kind == Cause::probe_found);
  CHECK(changes[0].path == found);
}

bool stamped(const Record& record, const std::string& dir)
{
  for (const auto& stamp : record.probe_dirs) {
    if (stamp.path == dir) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("a probe's directory is the text before its last slash", "[input_check]")
{
  CHECK(probe_directory("/a/b/c.h") == "/a/b");
  CHECK(probe_directory("/c.h") == "/");
  CHECK(probe_directory("a/c.h").empty());  // not absolute: stat'ed itself
  CHECK(probe_directory("/a/b/").empty());
  CHECK(probe_directory("").empty());
}

TEST_CASE("a directory vouches only when it changed before the compile's second", "[input_check]")
{
  const std::int64_t start = 1'700'000'000 * k_second + 400'000'000;  // 0.4 s into its second
  FileStat dir;
  dir.exists = true;
  dir.is_directory = true;
  dir.mtime_ns = dir.ctime_ns = start - 2 * k_second;
  CHECK(directory_may_vouch(dir, start));
  SECTION("changed earlier in the same second: a coarse timestamp cannot be told from later")
  {
    dir.mtime_ns = start - 300'000'000;
    CHECK_FALSE(directory_may_vouch(dir, start));
  }
  SECTION("ctime at or after the start")
  {
    dir.ctime_ns = start;
    CHECK_FALSE(directory_may_vouch(dir, start));
  }
  SECTION("a file is no directory")
  {
    dir.is_directory = false;
    CHECK_FALSE(directory_may_vouch(dir, start));
  }
}

TEST_CASE("unchanged directories prove their probes", "[input_check]")
{
  Compile c;
  c.stamp();
  CHECK(stamped(c.record, c.dir.path("inc0")));
  CHECK_FALSE(stamped(c.record, c.dir.path("gone")));  // absent: its absence is the proof
  CHECK(c.changes().empty());
  FileHasher hasher;
  CHECK_FALSE(first_changed_lookup(RecordedLookups::of(c.record), hasher));
}

TEST_CASE("every way a probe can start to find something is seen", "[input_check]")
{
  Compile c;
  c.stamp();
  std::string found;
  SECTION("a shadowing header appears in an earlier -I directory")
  {
    found = c.dir.write("inc0/cfg.h", "#define TILE 128\n");
  }
  SECTION("__has_include turns true")
  {
    found = c.dir.write("inc0/has_include.h", "\n");
  }
  SECTION("a missing directory appears with the header")
  {
    found = c.dir.write("gone/cfg.h", "\n");
  }
  SECTION("the directory is swapped for another one that holds the header")
  {
    c.dir.write("other/cfg.h", "#define TILE 128\n");
    std::filesystem::rename(c.dir.path("inc0"), c.dir.path("inc0.old"));
    std::filesystem::rename(c.dir.path("other"), c.dir.path("inc0"));
    found = c.dir.path("inc0/cfg.h");
  }
  SECTION("the directory becomes a symlink to one that holds the header")
  {
    c.dir.write("other/cfg.h", "#define TILE 128\n");
    std::filesystem::remove(c.dir.path("inc0"));
    std::filesystem::create_directory_symlink(c.dir.path("other"), c.dir.path("inc0"));
    found = c.dir.path("inc0/cfg.h");
  }
  require_only_probe_found(c, found);
}

TEST_CASE("a directory that does not exist is proven absent by its nearest ancestor",
          "[input_check]")
{
  Compile c;
  c.record.probes = group_probes({c.dir.path("inc0/sub/deeper/cfg.h"), c.dir.path("inc0/sub/a.h")});
  c.stamp();
  REQUIRE(c.record.probes.size() == 2);
  CHECK(c.record.probes[0].absent_under == c.dir.path("inc0"));
  CHECK(c.record.probes[1].absent_under == c.dir.path("inc0"));
  CHECK(stamped(c.record, c.dir.path("inc0")));
  CHECK(c.changes().empty());
  std::string found;
  SECTION("the directories appear with the header")
  {
    found = c.dir.write("inc0/sub/deeper/cfg.h", "#define TILE 128\n");
  }
  SECTION("a directory holding the header is renamed into the ancestor")
  {
    c.dir.write("other/deeper/cfg.h", "#define TILE 128\n");
    std::filesystem::rename(c.dir.path("other"), c.dir.path("inc0/sub"));
    found = c.dir.path("inc0/sub/deeper/cfg.h");
  }
  SECTION("a symlink to a directory holding the header appears")
  {
    c.dir.write("other/a.h", "\n");
    std::filesystem::create_directory_symlink(c.dir.path("other"), c.dir.path("inc0/sub"));
    found = c.dir.path("inc0/sub/a.h");
  }
  SECTION("the ancestor is swapped for another one that holds the header")
  {
    c.dir.write("other/sub/a.h", "\n");
    std::filesystem::rename(c.dir.path("inc0"), c.dir.path("inc0.old"));
    std::filesystem::rename(c.dir.path("other"), c.dir.path("inc0"));
    found = c.dir.path("inc0/sub/a.h");
  }
  require_only_probe_found(c, found);
}

TEST_CASE("an ancestor vouches for an absent directory only as a probe directory would",
          "[input_check]")
{
  Compile c;
  std::string probe = c.dir.path("inc0/sub/cfg.h");
  SECTION("a dangling symlink stands where the directory would be")
  {
    std::filesystem::create_directory_symlink(c.dir.path("nowhere"), c.dir.path("inc0/sub"));
  }
  SECTION("the ancestor changed in the compile's second")
  {
    c.start_ns = now_ns();
  }
  SECTION("the nearest existing ancestor is a file")
  {
    probe = c.dir.path("inc1/cfg.h/sub/cfg.h");
  }
  c.record.probes = group_probes({probe});
  c.stamp();
  REQUIRE(c.record.probes.size() == 1);
  CHECK(c.record.probes[0].absent_under.empty());
  CHECK(c.changes().empty());  // the directory is stat'ed itself, and does not resolve
}

TEST_CASE("a directory that changed in the compile's second is no proof", "[input_check]")
{
  Compile c;
  c.start_ns = now_ns();  // the directories were made in this second (or the one before)
  const std::int64_t limit = c.start_ns - c.start_ns % k_second;
  c.stamp();
  const FileStat inc0 = stat_file(c.dir.path("inc0"));
  CHECK(stamped(c.record, c.dir.path("inc0")) == (inc0.ctime_ns < limit));
  // A header created now, in the compile's second, is found whatever was stamped.
  c.dir.write("inc0/cfg.h", "\n");
  auto changes = c.changes();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == c.dir.path("inc0/cfg.h"));
}

TEST_CASE("a stamp that no longer matches means stat'ing its probes", "[input_check]")
{
  Compile c;
  c.stamp();
  REQUIRE(stamped(c.record, c.dir.path("inc0")));
  c.dir.write("inc0/unrelated.h", "\n");  // the directory changed, its probes still absent
  CHECK(c.changes().empty());
  c.dir.write("inc0/cfg.h", "\n");
  CHECK(c.changes().size() == 1);
}

TEST_CASE("a dangling symlink among the probes keeps its directory from vouching", "[input_check]")
{
  Compile c;
  std::filesystem::create_symlink(c.dir.path("elsewhere/cfg.h"), c.dir.path("inc0/cfg.h"));
  c.stamp();
  CHECK_FALSE(stamped(c.record, c.dir.path("inc0")));
  CHECK(c.changes().empty());
  c.dir.write("elsewhere/cfg.h", "\n");  // the symlink's target appears: inc0 did not change
  auto changes = c.changes();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == c.dir.path("inc0/cfg.h"));
}

TEST_CASE("inputs come first, and first_change stops at the first", "[input_check]")
{
  Compile c;
  c.stamp();
  c.dir.write("inc1/cfg.h", "#define TILE 128\n");
  c.dir.write("inc0/cfg.h", "\n");
  CHECK(c.changes().size() == 2);
  auto first = c.changes(LookupCheck::first_change);
  REQUIRE(first.size() == 1);
  CHECK(first[0].kind == Cause::input_changed);
  std::filesystem::remove(c.dir.path("inc1/cfg.h"));
  CHECK(c.changes(LookupCheck::first_change)[0].kind == Cause::input_missing);
}

TEST_CASE("the check counts the inputs whose stamp changed, their content the same or not",
          "[input_check]")
{
  Compile c;
  c.stamp();
  const std::string other = c.dir.write("inc1/other.h", "#define OTHER 1\n");
  c.record.inputs.push_back({*FileHasher().fingerprint(other).fingerprint, InputRole::header, {}});
  FileHasher hasher;
  std::size_t touched = 99;
  CHECK(changed_lookups(RecordedLookups::of(c.record), hasher, LookupCheck::every_change, &touched)
          .empty());
  CHECK(touched == 0);
  set_mtime_ns(other, now_ns() - 10 * k_second);  // touched, content unchanged
  FileHasher second;
  CHECK(changed_lookups(RecordedLookups::of(c.record), second, LookupCheck::every_change, &touched)
          .empty());
  CHECK(touched == 1);
  c.dir.write("inc1/cfg.h", "#define TILE 128\n");  // changed
  FileHasher third;
  auto changes =
    changed_lookups(RecordedLookups::of(c.record), third, LookupCheck::every_change, &touched);
  CHECK(touched == 2);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].kind == Cause::input_changed);
}

TEST_CASE("touched inputs with their content unchanged get their new stamp once settled",
          "[input_check]")
{
  Compile c;
  const std::string header = c.dir.path("inc1/cfg.h");
  set_mtime_ns(header, now_ns() - 10 * k_second);
  FileHasher hasher;
  CHECK(c.changes().empty());
  SECTION("settled: restamped")
  {
    auto restamped = restamped_inputs(c.record.inputs, hasher, now_ns(), /*settle_ns=*/0);
    REQUIRE(restamped);
    CHECK((*restamped)[0].file.mtime_ns == stat_file(header).mtime_ns);
    CHECK((*restamped)[0].file.hash == c.record.inputs[0].file.hash);
  }
  SECTION("its ctime too recent: a same-size rewrite in the same tick would keep it")
  {
    CHECK_FALSE(restamped_inputs(c.record.inputs, hasher, now_ns()));
  }
  SECTION("content changed: never")
  {
    c.dir.write("inc1/cfg.h", "#define TILE 128\n");
    CHECK_FALSE(restamped_inputs(c.record.inputs, hasher, now_ns(), 0));
  }
  SECTION("untouched: nothing to do")
  {
    c.record.inputs[0].file = *FileHasher().fingerprint(header).fingerprint;
    CHECK_FALSE(restamped_inputs(c.record.inputs, hasher, now_ns(), 0));
  }
}

TEST_CASE("a directory below one that does not exist holds nothing", "[input_check]")
{
  Compile c;
  c.record.probes = group_probes(
    {c.dir.path("gone/cfg.h"), c.dir.path("gone/sub/cfg.h"), c.dir.path("gone/sub/deeper/cfg.h")});
  c.stamp();
  CHECK(c.changes().empty());
  c.dir.write("gone/sub/deeper/cfg.h", "\n");
  auto changes = c.changes();
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == c.dir.path("gone/sub/deeper/cfg.h"));
  std::filesystem::remove_all(c.dir.path("gone"));
  c.dir.write("gone", "a file, not a directory\n");
  CHECK(c.changes().empty());
}
