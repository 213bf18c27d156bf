#include "freshness/indexed_freshness.hpp"
#include "freshness/input_check.hpp"
#include "freshness/record_index.hpp"
#include "temp_dir.hpp"
#include "util/clock.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

using namespace nvfresh;

namespace {

constexpr std::int64_t k_second = 1'000'000'000;
constexpr std::int64_t k_settle = 2 * k_second;

// A tree with one record: an object, a header, a probe in a stamped directory, one in a directory
// that does not exist, one in a directory that exists unstamped. The index is made "later"
// (now + 10 s), so the record file counts as settled.
struct Tree {
  test::TempDir dir;
  std::string build_dir = dir.path("build");
  std::string record_file = dir.path("build/.nvfresh/records/k.o-1.rec");
  std::string index_file = dir.path("build/.nvfresh/records.index");
  std::map<std::string, std::string> env{{"NVCC_APPEND_FLAGS", "-O2"}, {"PATH", "/usr/bin"}};
  Record record;
  std::int64_t later_ns = now_ns() + 10 * k_second;

  Tree()
  {
    FileHasher hasher;
    const std::string header = dir.write("src/include/k.h", "#define K 1\n");
    const std::string object = dir.write("build/k.o", "object bytes");
    std::filesystem::create_directories(dir.path("src/first"));
    std::filesystem::create_directories(dir.path("src/unstamped"));
    dir.write(record_file.substr(dir.path("").size()), "record text");
    record.object = object;
    record.source = dir.path("src/k.cu");
    record.output = *hasher.fingerprint(object).fingerprint;
    record.inputs.push_back({*hasher.fingerprint(header).fingerprint, InputRole::header, {}});
    record.probes = group_probes(
      {dir.path("src/first/k.h"), dir.path("src/gone/k.h"), dir.path("src/unstamped/k.h")});
    std::vector<ProbeGroup> first = group_probes({dir.path("src/first/k.h")});
    record.probe_dirs = stamp_probe_directories(first, now_ns() + 5 * k_second);
    record.env = env;
  }

  RecordIndex indexed()
  {
    RecordIndex index;
    REQUIRE(index.add(record_file, stat_file(record_file), record, later_ns, k_settle));
    index.write(index_file, build_dir);
    return RecordIndex::read(index_file, build_dir);
  }

  // Whether the index alone calls the record fresh now.
  bool fresh_by_index(const std::map<std::string, std::string>& current)
  {
    RecordIndex index = RecordIndex::read(index_file, build_dir);
    const IndexedRecord* entry = index.find(record_file, stat_file(record_file));
    if (entry == nullptr) {
      return false;
    }
    FileHasher hasher;
    IndexedFreshness freshness(index, hasher, current);
    freshness.stat_ahead({entry});
    return freshness.still_fresh(*entry);
  }
};

}  // namespace

TEST_CASE("record index: what was written reads back, for its own tree only", "[record_index]")
{
  Tree tree;
  RecordIndex index = tree.indexed();
  REQUIRE(index.size() == 1);
  const IndexedRecord* entry = index.find(tree.record_file, stat_file(tree.record_file));
  REQUIRE(entry != nullptr);
  CHECK(index.path(entry->object) == tree.record.object);
  CHECK(index.path(entry->source) == tree.record.source);
  CHECK(entry->output_hash == tree.record.output.hash);
  REQUIRE(entry->inputs.size() == 1);
  CHECK(index.path(index.stamp(entry->inputs[0]).path) == tree.record.inputs[0].file.path);
  CHECK(entry->directories.size() == 2);  // first/ (stamped) and gone/ (does not resolve)
  REQUIRE(entry->absent.size() == 1);     // unstamped/ cannot vouch: its probe is kept itself
  CHECK(index.path(entry->absent[0]) == tree.dir.path("src/unstamped/k.h"));
  CHECK(index.changed());  // nothing kept yet: written now, it would be empty
  index.keep(*entry);
  CHECK_FALSE(index.changed());
  CHECK(RecordIndex::read(tree.index_file, tree.dir.path("elsewhere")).size() == 0);
  CHECK(RecordIndex::read(tree.dir.path("no-such-index"), tree.build_dir).size() == 0);
}

TEST_CASE("record index: a damaged or truncated file is an empty index", "[record_index]")
{
  Tree tree;
  tree.indexed();
  std::string bytes = read_file(tree.index_file);
  for (size_t at : {size_t{0}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5A);
    write_file_atomically(tree.index_file, damaged);
    CHECK(RecordIndex::read(tree.index_file, tree.build_dir).size() == 0);
  }
  write_file_atomically(tree.index_file, bytes.substr(0, bytes.size() - 20));
  CHECK(RecordIndex::read(tree.index_file, tree.build_dir).size() == 0);
}

TEST_CASE("record index: only trusted, traced, settled records with absolute probes get an entry",
          "[record_index]")
{
  Tree tree;
  RecordIndex index;
  const FileStat file = stat_file(tree.record_file);
  SECTION("untrusted")
  {
    tree.record.trusted = false;
    CHECK_FALSE(index.add(tree.record_file, file, tree.record, tree.later_ns, k_settle));
  }
  SECTION("inputs from nvcc's depfile only")
  {
    tree.record.inputs_from_trace = false;
    CHECK_FALSE(index.add(tree.record_file, file, tree.record, tree.later_ns, k_settle));
  }
  SECTION("a relative probe")
  {
    tree.record.probes.push_back({"", {"relative.h"}, ""});
    CHECK_FALSE(index.add(tree.record_file, file, tree.record, tree.later_ns, k_settle));
  }
  SECTION("a record file written less than the settle time ago")
  {
    CHECK_FALSE(
      index.add(tree.record_file, file, tree.record, file.ctime_ns + k_settle - 1, k_settle));
  }
  CHECK(index.size() == 0);
  CHECK_FALSE(index.changed());
}

TEST_CASE("record index: a record file with another stamp has no entry", "[record_index]")
{
  Tree tree;
  RecordIndex index = tree.indexed();
  write_file_atomically(tree.record_file, "record text, rewritten");
  CHECK(index.find(tree.record_file, stat_file(tree.record_file)) == nullptr);
  CHECK(index.find(tree.dir.path("build/.nvfresh/records/other.rec"),
                   stat_file(tree.record_file)) == nullptr);
  CHECK(index.changed());  // nothing kept: written, it would be empty
}

TEST_CASE("record index: the index alone says fresh only while everything holds", "[record_index]")
{
  Tree tree;
  tree.indexed();
  REQUIRE(tree.fresh_by_index(tree.env));
  SECTION("the header touched (the full check decides by content)")
  {
    set_mtime_ns(tree.record.inputs[0].file.path, now_ns() - 100 * k_second);
    CHECK_FALSE(tree.fresh_by_index(tree.env));
  }
  SECTION("the object rewritten")
  {
    write_file_atomically(tree.record.object, "other bytes");
    CHECK_FALSE(tree.fresh_by_index(tree.env));
  }
  SECTION("a file created in the stamped probe directory")
  {
    tree.dir.write("src/first/unrelated.h", "");
    CHECK_FALSE(tree.fresh_by_index(tree.env));
  }
  SECTION("the directory that did not resolve now does")
  {
    std::filesystem::create_directories(tree.dir.path("src/gone"));
    CHECK_FALSE(tree.fresh_by_index(tree.env));
  }
  SECTION("the probe of the unstamped directory now exists")
  {
    tree.dir.write("src/unstamped/k.h", "#define K 2\n");
    CHECK_FALSE(tree.fresh_by_index(tree.env));
  }
  SECTION("another file in the unstamped directory changes nothing")
  {
    tree.dir.write("src/unstamped/other.h", "");
    CHECK(tree.fresh_by_index(tree.env));
  }
  SECTION("the environment differs")
  {
    auto env = tree.env;
    env["NVCC_APPEND_FLAGS"] = "-O3";
    CHECK_FALSE(tree.fresh_by_index(env));
    env.erase("NVCC_APPEND_FLAGS");
    CHECK_FALSE(tree.fresh_by_index(env));
  }
  SECTION("PATH differs, and the compile found nothing on it: no matter")
  {
    auto env = tree.env;
    env["PATH"] = "/opt/other/bin:/usr/bin";
    CHECK(tree.fresh_by_index(env));
  }
}

TEST_CASE("record index: PATH matters for a compile that found programs on it", "[record_index]")
{
  Tree tree;
  // gcc found in the second PATH directory, after a probe in the first: a PATH lookup.
  const std::string bin1 = tree.dir.path("bin1");
  const std::string bin2 = tree.dir.path("bin2");
  std::filesystem::create_directories(bin1);
  const std::string gcc = tree.dir.write("bin2/gcc", "#!/bin/sh\n");
  FileHasher hasher;
  tree.record.inputs.push_back({*hasher.fingerprint(gcc).fingerprint, InputRole::tool, {}});
  tree.record.probes.push_back({bin1, {"gcc"}, ""});
  tree.record.env["PATH"] = bin1 + ":" + bin2;
  tree.env["PATH"] = bin1 + ":" + bin2;
  tree.indexed();
  CHECK(tree.fresh_by_index(tree.env));
  auto env = tree.env;
  env["PATH"] = bin2;
  CHECK_FALSE(tree.fresh_by_index(env));
}
