#include "freshness/file_hasher.hpp"
#include "temp_dir.hpp"
#include "util/file_io.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace nvfresh;

TEST_CASE("fingerprints carry stat fields and the content hash", "[file_hasher]")
{
  test::TempDir dir;
  auto path = dir.write("h.h", "#define A 1\n");
  FileHasher hasher;
  auto result = hasher.fingerprint(path);
  REQUIRE(result.fingerprint);
  REQUIRE(result.fingerprint->hash == hash_bytes("#define A 1\n"));
  REQUIRE(result.fingerprint->size == 12);
  REQUIRE_FALSE(hasher.fingerprint(dir.path("missing.h")).fingerprint);
  REQUIRE_FALSE(hasher.fingerprint(dir.path()).fingerprint);
}

TEST_CASE("content decides when stat differs", "[file_hasher]")
{
  test::TempDir dir;
  auto path = dir.write("h.h", "#define A 1\n");
  auto recorded = *FileHasher().fingerprint(path).fingerprint;

  SECTION("same content, new mtime: unchanged")
  {
    set_mtime_ns(path, recorded.mtime_ns + 5'000'000'000);
    REQUIRE(FileHasher().unchanged(recorded));
  }
  SECTION("new content with the old mtime (cp -p, tar x): changed")
  {
    dir.write("h.h", "#define A 2\n");
    set_mtime_ns(path, recorded.mtime_ns);
    std::optional<FileFingerprint> now;
    REQUIRE_FALSE(FileHasher().unchanged(recorded, &now));
    REQUIRE(now);
    REQUIRE(now->hash == hash_bytes("#define A 2\n"));
  }
  SECTION("deleted: changed")
  {
    std::filesystem::remove(path);
    REQUIRE_FALSE(FileHasher().unchanged(recorded));
  }
}

TEST_CASE("large files are remembered in the shared cache file", "[file_hasher]")
{
  test::TempDir dir;
  std::string big(FileHasher::k_cached_size_threshold + 10, 'x');
  auto path = dir.write("cicc", big);
  std::string cache = dir.path(".nvfresh/hash-cache");
  auto first = FileHasher(cache, 0).fingerprint(path);
  REQUIRE(first.fingerprint);
  auto text = try_read_file(cache);
  REQUIRE(text);
  REQUIRE(text->find(path) != std::string::npos);
  auto second = FileHasher(cache, 0).fingerprint(path);
  REQUIRE(second.fingerprint == first.fingerprint);

  dir.write("cicc", std::string(big.size(), 'y'));  // same size, new content: stat differs
  auto third = FileHasher(cache, 0).fingerprint(path);
  REQUIRE(third.fingerprint->hash == hash_bytes(std::string(big.size(), 'y')));
}

TEST_CASE("with a shared cache file, new entries go there and every tree's hasher finds them",
          "[file_hasher]")
{
  test::TempDir dir;
  const std::string big(FileHasher::k_cached_size_threshold + 10, 'x');
  const auto tool = dir.write("cuda/bin/ptxas", big);
  const std::string shared = dir.path("cache/hash-cache");
  const std::string tree_a = dir.path("a/.nvfresh/hash-cache");
  const std::string tree_b = dir.path("b/.nvfresh/hash-cache");
  auto first = FileHasher(tree_a, 0, shared).fingerprint(tool);
  REQUIRE(first.fingerprint);
  CHECK_FALSE(try_read_file(tree_a));  // the tree's file gets nothing new
  REQUIRE(try_read_file(shared));
  CHECK(try_read_file(shared)->find(tool) != std::string::npos);

  // Another tree's hasher takes the shared entry: proven by a wrong hash planted in it, which only
  // a cache lookup (never a read of the file) can return.
  const FileStat st = stat_file(tool);
  const Digest planted = hash_bytes("planted");
  write_file_atomically(shared,
                        fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", planted.to_hex(), st.size,
                                    st.mtime_ns, st.ctime_ns, st.inode, st.device, tool));
  CHECK(FileHasher(tree_b, 0, shared).fingerprint(tool).fingerprint->hash == planted);
  CHECK(FileHasher(tree_b, 0).fingerprint(tool).fingerprint->hash == first.fingerprint->hash);

  // The tree's own file is still read (entries from before a shared file existed).
  write_file_atomically(tree_b,
                        fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", planted.to_hex(), st.size,
                                    st.mtime_ns, st.ctime_ns, st.inode, st.device, tool));
  CHECK(FileHasher(tree_b, 0, dir.path("cache/other")).fingerprint(tool).fingerprint->hash ==
        planted);
}

TEST_CASE("a corrupt cache file is ignored", "[file_hasher]")
{
  test::TempDir dir;
  std::string cache = dir.write("hash-cache", "garbage\tline\nzz\t1\t2\t3\t4\t5\t/x\n");
  auto path = dir.write("h.h", "content");
  REQUIRE(FileHasher(cache).fingerprint(path).fingerprint->hash == hash_bytes("content"));
}

TEST_CASE("a file changed moments ago is not put in the shared cache", "[file_hasher]")
{
  test::TempDir dir;
  auto path = dir.write("ptxas", std::string(FileHasher::k_cached_size_threshold + 1, 'p'));
  std::string cache = dir.path("hash-cache");
  REQUIRE(FileHasher(cache).fingerprint(path).fingerprint);
  REQUIRE_FALSE(try_read_file(cache).has_value());
}

TEST_CASE("a seeded stamp stands for the content while the stat is the stamp's, and only then",
          "[file_hasher]")
{
  test::TempDir dir;
  auto path = dir.write("h.h", "#define A 1\n");
  FileFingerprint known = *FileHasher().fingerprint(path).fingerprint;
  known.hash = hash_bytes("what the record said");  // proves the file was not read
  {
    FileHasher hasher;
    hasher.seed({known});
    CHECK(hasher.fingerprint(path).fingerprint->hash == hash_bytes("what the record said"));
  }
  dir.write("h.h", "#define A 2\n");  // same size, new ctime: the stamp no longer holds
  FileHasher hasher;
  hasher.seed({known});
  CHECK(hasher.fingerprint(path).fingerprint->hash == hash_bytes("#define A 2\n"));
}

TEST_CASE("stat_ahead memoizes what stat would say, on several threads for many paths",
          "[file_hasher]")
{
  test::TempDir dir;
  std::vector<std::string> paths;
  for (size_t i = 0; i < 3 * FileHasher::k_paths_per_stat_thread; ++i) {
    paths.push_back(i % 3 == 0 ? dir.path(fmt::format("missing-{}.h", i))
                               : dir.write(fmt::format("h{}.h", i), std::string(i, 'x')));
  }
  std::vector<const std::string*> wanted;
  for (const auto& path : paths) {
    wanted.push_back(&path);
  }
  wanted.push_back(&paths[1]);  // a path given twice is stat'ed for both
  FileHasher hasher;
  const std::vector<FileStat> ahead = hasher.stat_ahead(wanted);
  REQUIRE(ahead.size() == wanted.size());
  CHECK(ahead.back().size == 1);
  for (const auto& path : paths) {
    std::filesystem::remove(path);  // the memo answers, as for a stat made before the removal
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    const FileStat memo = hasher.stat(paths[i]);
    CHECK(memo.exists == (i % 3 != 0));
    CHECK(memo.size == (i % 3 != 0 ? i : 0));
    CHECK(ahead[i].same_content_stamp(memo));
  }
  hasher.stat_ahead(wanted);  // already known: not stat'ed again
  CHECK(hasher.stat(paths[1]).exists);
}

TEST_CASE("hash_ahead hashes what fingerprint would, and a file that moved since its stat is read "
          "again",
          "[file_hasher]")
{
  test::TempDir dir;
  std::vector<std::string> paths;
  for (size_t i = 0; i < 3 * FileHasher::k_paths_per_hash_thread; ++i) {
    paths.push_back(dir.write(fmt::format("h{}.h", i), fmt::format("#define H{} {}\n", i, i)));
  }
  std::vector<const std::string*> wanted;
  for (const auto& path : paths) {
    wanted.push_back(&path);
  }
  FileHasher hasher;
  hasher.stat_ahead(wanted);
  // Rewritten between the memoized stat and the early hash, with another size: the stat after
  // the hash does not match the one before, so fingerprint stats and reads it again.
  dir.write("h0.h", "#define H0 changed\n");
  hasher.hash_ahead(wanted);
  // Rewritten after the early hash: fingerprint answers for the consistent stat, hash, stat it
  // made (as it would have a moment earlier); the next check sees the new stamp.
  dir.write("h1.h", "#define H1 changed again\n");
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto result = hasher.fingerprint(paths[i]);
    REQUIRE(result.fingerprint);
    const std::string content =
      i == 0 ? "#define H0 changed\n" : fmt::format("#define H{} {}\n", i, i);
    CHECK(result.fingerprint->hash == hash_bytes(content));
    CHECK(result.fingerprint->size == content.size());
  }
  CHECK(FileHasher().fingerprint(paths[1]).fingerprint->hash ==
        hash_bytes("#define H1 changed again\n"));
}

TEST_CASE("the shared hash cache is never written through a symlink", "[file_hasher]")
{
  test::TempDir dir;
  const auto tool =
    dir.write("cuda/bin/ptxas", std::string(FileHasher::k_cached_size_threshold + 10, 'x'));
  const auto victim = dir.write("victim", "precious\n");
  std::filesystem::create_directories(dir.path("cache"));
  std::filesystem::create_symlink(victim, dir.path("cache/hash-cache"));
  auto fingerprint = FileHasher(dir.path("a/.nvfresh/hash-cache"), 0, dir.path("cache/hash-cache"))
                       .fingerprint(tool);
  REQUIRE(fingerprint.fingerprint);
  CHECK(try_read_file(victim) == "precious\n");
}
