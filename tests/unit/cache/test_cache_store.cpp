#include "cache/cache_store.hpp"

#include "util/compressed_file.hpp"
#include "util/file_io.hpp"

#include "../temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

using namespace nvfresh;

namespace {

CacheEntry entry_of_size(size_t bytes, char fill = 'x')
{
  CacheEntry entry;
  entry.object = std::string(bytes, fill);
  entry.components = {{"host code", hash_bytes(entry.object)}};
  return entry;
}

std::string random_bytes(size_t size, unsigned seed)
{
  std::string bytes(size, '\0');
  std::uint32_t state = seed * 2654435761u + 1;
  for (auto& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

}  // namespace

TEST_CASE("cache store: entries and manifests are written whole, read back, and counted", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest key = hash_bytes("entry");
  CHECK_FALSE(store.read_entry(key));
  store.write_entry(key, entry_of_size(1000));
  auto read = store.read_entry(key);
  REQUIRE(read);
  CHECK(read->object == std::string(1000, 'x'));
  store.update_manifest(hash_bytes("manifest"), [&](Manifest& manifest) {
    ManifestEntry e;
    e.result = key;
    add_entry(manifest, e);
  });
  REQUIRE(store.read_manifest(hash_bytes("manifest")));
  CHECK(store.read_manifest(hash_bytes("manifest"))->entries.size() == 1);
  CHECK(std::filesystem::exists(dir.path("cache/CACHEDIR.TAG")));
  CacheCounters counters = store.counters();
  CHECK(counters[CacheCounter::stores] >= 1);
  CHECK(counters[CacheCounter::files] == 2);
  CHECK(counters[CacheCounter::bytes] > 0);
  CHECK(store.entry_keys() == std::vector<Digest>{key});
  store.clear();
  CHECK_FALSE(store.read_entry(key));
  CHECK(store.entry_keys().empty());
}

TEST_CASE("cache store: a damaged entry file is a miss, with the reason", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest key = hash_bytes("entry");
  store.write_entry(key, entry_of_size(5000));
  {
    std::fstream file(store.entry_file(key), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(20);
    file.put('\x55');
  }
  std::string error;
  CHECK_FALSE(store.read_entry(key, &error));
  CHECK_FALSE(error.empty());
}

TEST_CASE("cache store: over the cap, least recently used files go, amortized per store", "[cache]")
{
  test::TempDir dir;
  const std::uint64_t cap = 64 * 1024;
  CacheStore store(dir.path("cache"), {cap, 0});
  std::vector<Digest> keys;
  for (unsigned i = 0; i < 40; ++i) {
    CacheEntry entry;
    entry.object = random_bytes(8 * 1024, i);  // incompressible
    keys.push_back(hash_bytes("k" + std::to_string(i)));
    store.write_entry(keys.back(), entry);
  }
  CacheCounters counters = store.counters();
  CHECK(counters[CacheCounter::evictions] > 0);
  CHECK(static_cast<std::uint64_t>(counters[CacheCounter::bytes]) <= cap + 16 * 1024);
  CHECK(store.read_entry(keys.back()));  // the newest stays
  EvictionSummary summary = store.evict(0);
  CHECK(summary.files > 0);
  CHECK(store.entry_keys().empty());
  CHECK(store.counters()[CacheCounter::bytes] == 0);
}

TEST_CASE("cache store: evict --older-than removes what was not used since", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  store.write_entry(hash_bytes("old"), entry_of_size(100));
  store.write_entry(hash_bytes("new"), entry_of_size(100));
  std::filesystem::last_write_time(store.entry_file(hash_bytes("old")),
                                   std::filesystem::file_time_type::clock::now() -
                                     std::chrono::hours(24 * 40));
  const std::int64_t thirty_days_ago =
    std::chrono::duration_cast<std::chrono::nanoseconds>(
      (std::chrono::system_clock::now() - std::chrono::hours(24 * 30)).time_since_epoch())
      .count();
  store.evict(1ULL << 30, thirty_days_ago);
  CHECK_FALSE(store.read_entry(hash_bytes("old")));
  CHECK(store.read_entry(hash_bytes("new")));
}

TEST_CASE("cache store: many writers of one manifest lose no entry", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest key = hash_bytes("shared manifest");
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) {
    writers.emplace_back([&, i] {
      CacheStore own(dir.path("cache"), {1ULL << 30, 0});
      own.update_manifest(key, [&](Manifest& manifest) {
        ManifestEntry e;
        e.result = hash_bytes("r" + std::to_string(i));
        add_entry(manifest, e);
      });
    });
  }
  for (auto& writer : writers) {
    writer.join();
  }
  auto manifest = store.read_manifest(key);
  REQUIRE(manifest);
  CHECK(manifest->entries.size() == 8);
}

namespace {

std::uint64_t bytes_on_disk(const std::string& root)
{
  std::uint64_t bytes = 0;
  for (const auto& file : std::filesystem::recursive_directory_iterator(root)) {
    const std::string path = file.path().string();
    if (path.ends_with(".entry") || path.ends_with(".manifest")) {
      bytes += std::filesystem::file_size(file.path());
    }
  }
  return bytes;
}

}  // namespace

TEST_CASE("cache store: concurrent stores past the cap are counted once and evicted to the cap",
          "[cache]")
{
  // Each writer has its own store, as each nvcc launch does; a shard's eviction runs beside the
  // others' writes. The counters must stay the bytes on disk (a write that lands between an
  // eviction's listing and its recount was lost, or counted twice), and once every writer is done
  // the last eviction leaves the cache at its cap.
  test::TempDir dir;
  const std::uint64_t cap = 96 * 1024;
  std::vector<std::thread> writers;
  for (unsigned w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      CacheStore own(dir.path("cache"), {cap, 0});
      for (unsigned i = 0; i < 40; ++i) {
        CacheEntry entry;
        entry.object = random_bytes(6 * 1024, w * 100 + i);
        const Digest key = hash_bytes(fmt::format("w{}-{}", w, i));
        own.write_entry(key, entry);
        ManifestEntry e;  // with input hashes, some KiB: a manifest is counted like an entry
        e.result = key;
        for (unsigned j = 0; j < 300; ++j) {
          e.inputs.push_back({fmt::format("include/h{}.h", j),
                              hash_bytes(fmt::format("{}-{}-{}", w, i, j)), "header", "-"});
        }
        own.update_manifest(hash_bytes(fmt::format("m{}-{}", w, i)),
                            [&](Manifest& manifest) { add_entry(manifest, e); });
      }
    });
  }
  for (auto& writer : writers) {
    writer.join();
  }
  CacheStore store(dir.path("cache"), {cap, 0});
  const CacheCounters counters = store.counters();
  CHECK(counters[CacheCounter::evictions] > 0);
  CHECK(static_cast<std::uint64_t>(counters[CacheCounter::bytes]) ==
        bytes_on_disk(dir.path("cache")));
  CHECK(static_cast<std::uint64_t>(counters[CacheCounter::bytes]) <= cap);
}

TEST_CASE("cache store: an entry file copied under another key is a miss", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest a = hash_bytes("entry A");
  const Digest b = hash_bytes("entry B");
  store.write_entry(a, entry_of_size(1000, 'a'));
  store.write_entry(b, entry_of_size(1000, 'b'));
  REQUIRE(store.read_entry(a));
  std::filesystem::copy_file(store.entry_file(b), store.entry_file(a),
                             std::filesystem::copy_options::overwrite_existing);
  std::string error;
  CHECK_FALSE(store.read_entry(a, &error));
  CHECK(error.find("another key") != std::string::npos);
  auto still_b = store.read_entry(b);
  REQUIRE(still_b);
  CHECK(still_b->result_key == b);
  CHECK(still_b->object_digest == hash_bytes(still_b->object));
}

TEST_CASE("cache store: a resealed entry whose object is not its digest's is a miss", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest key = hash_bytes("entry A");
  store.write_entry(key, entry_of_size(1000, 'a'));
  auto entry = store.read_entry(key);
  REQUIRE(entry);
  entry->object = std::string(1000, 'b');  // another object, the file's checksum made anew
  write_compressed_file(store.entry_file(key), serialize_cache_entry(*entry));
  std::string error;
  CHECK_FALSE(store.read_entry(key, &error));
  CHECK(error.find("digest") != std::string::npos);
}

namespace {

// The shard directory of a key, made by a first store, with `name` in it replaced by a symlink.
std::string plant_link_in_shard(CacheStore& store, const Digest& key, const std::string& name,
                                const std::string& target)
{
  store.write_entry(key, entry_of_size(100));
  const std::string shard = store.root() + "/" + key.to_hex().substr(0, 1);
  std::filesystem::remove(shard + "/" + name);
  std::filesystem::create_symlink(target, shard + "/" + name);
  return shard;
}

}  // namespace

TEST_CASE("cache store: a symlinked stats or lock file of a shard is never written through",
          "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest key = hash_bytes("entry");
  const std::string victim = dir.write("victim", "precious\n");
  SECTION("stats")
  {
    plant_link_in_shard(store, key, "stats", victim);
    CHECK_THROWS(store.write_entry(key, entry_of_size(200)));
    store.count(key, CacheCounter::hits);  // statistics: best effort, still not through the link
    CHECK(try_read_file(victim) == "precious\n");
  }
  SECTION("lock")
  {
    std::filesystem::create_directories(dir.path("elsewhere"));
    plant_link_in_shard(store, key, "lock", dir.path("elsewhere/lock"));
    CHECK_THROWS(store.write_entry(key, entry_of_size(200)));
    CHECK_THROWS(store.clear());
    CHECK_FALSE(std::filesystem::exists(dir.path("elsewhere/lock")));
  }
}

TEST_CASE("cache store: a shard that is a symlink is neither written to nor walked", "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest key = hash_bytes("entry");
  const std::string outside = dir.write("outside/sub/notes.entry", "the user's file");
  dir.write("outside/x.manifest", "the user's file");
  std::filesystem::create_directories(dir.path("cache"));
  std::filesystem::create_symlink(dir.path("outside"),
                                  dir.path("cache/" + key.to_hex().substr(0, 1)));
  CHECK_FALSE(store.refusal().empty());
  CHECK_THROWS(store.write_entry(key, entry_of_size(100)));
  store.clear();
  store.evict(0);
  CHECK(store.entry_keys().empty());
  CHECK(std::filesystem::exists(outside));
  CHECK(std::filesystem::exists(dir.path("outside/x.manifest")));
  CHECK_FALSE(std::filesystem::exists(dir.path("outside/lock")));
  CHECK_FALSE(std::filesystem::exists(dir.path("outside/stats")));
}

TEST_CASE("cache store: a cache dir of another user, or that others may write, is refused",
          "[cache]")
{
  test::TempDir dir;
  const std::string root = dir.path("cache");
  CacheStore store(root, {1ULL << 30, 0});
  CHECK(store.refusal().empty());  // not there yet: the store makes it, the user's own
  store.write_entry(hash_bytes("entry"), entry_of_size(100));
  CHECK(store.refusal().empty());
  CHECK(::chmod(root.c_str(), 0777) == 0);
  CHECK(store.refusal().find("writable by everyone") != std::string::npos);
  CHECK(::chmod(root.c_str(), 0775) == 0);
  CHECK(store.refusal().find("writable by its group") != std::string::npos);
  CHECK(::chmod(root.c_str(), 0755) == 0);
  const uid_t other = ::geteuid() == 0 ? 12345 : ::geteuid() + 1;
  if (::chown(root.c_str(), other, static_cast<gid_t>(-1)) == 0) {  // as root (the tests here)
    CHECK(store.refusal().find("belongs to uid") != std::string::npos);
    CHECK_THROWS(store.write_entry(hash_bytes("another"), entry_of_size(100)));
    // A team's cache dir: another member's, group-writable and setgid.
    CHECK(::chmod(root.c_str(), 02775) == 0);
    CacheStore team(root, {1ULL << 30, 0}, true);
    CHECK(team.refusal().empty());
    CHECK(::chmod(root.c_str(), 0777) == 0);
    CHECK(team.refusal().find("writable by everyone") != std::string::npos);
    CHECK(::chmod(root.c_str(), 01777) == 0);
    CHECK(team.refusal().empty());
  }
}

TEST_CASE("cache store: a team's cache dir makes its directories group-writable and setgid",
          "[cache]")
{
  test::TempDir dir;
  CacheStore team(dir.path("cache"), {1ULL << 30, 0}, true);
  const Digest key = hash_bytes("entry");
  team.write_entry(key, entry_of_size(100));
  struct stat st {};
  REQUIRE(::stat(dir.path("cache").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 02775);
  REQUIRE(::stat(std::filesystem::path(team.entry_file(key)).parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 02775);
  CHECK(team.read_entry(key));
}

TEST_CASE("cache store: step entries are stored beside objects, bound to their key, counted and "
          "evicted",
          "[cache]")
{
  test::TempDir dir;
  const std::uint64_t cap = 64 * 1024;
  CacheStore store(dir.path("cache"), {cap, 0});
  StepEntry step;
  step.tool = "/usr/local/cuda/bin/ptxas";
  step.pass = "sm_80";
  step.outputs = {{"/tmp/tmpxft_########_########-9_k.cubin", random_bytes(8 * 1024, 1)}};
  const Digest key = hash_bytes("step");
  CHECK_FALSE(store.read_step(key));
  store.write_step(key, step);
  auto read = store.read_step(key);
  REQUIRE(read);
  CHECK(read->key == key);
  CHECK(read->outputs == step.outputs);
  CHECK(store.counters()[CacheCounter::step_stores] == 1);
  CHECK(store.counters()[CacheCounter::files] == 1);

  // Moved under another key, it is a miss there.
  const Digest other = hash_bytes("other");
  std::filesystem::create_directories(std::filesystem::path(store.step_file(other)).parent_path());
  std::filesystem::copy_file(store.step_file(key), store.step_file(other));
  std::string error;
  CHECK_FALSE(store.read_step(other, &error));
  CHECK(error.find("another key") != std::string::npos);

  // A damaged one is a miss, with the reason.
  {
    std::fstream file(store.step_file(key), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(30);
    file.put('\x55');
  }
  error.clear();
  CHECK_FALSE(store.read_step(key, &error));
  CHECK_FALSE(error.empty());

  // Steps count against the cap like objects.
  for (unsigned i = 0; i < 30; ++i) {
    step.outputs[0].content = random_bytes(8 * 1024, i + 2);
    store.write_step(hash_bytes("s" + std::to_string(i)), step);
  }
  CHECK(store.counters()[CacheCounter::evictions] > 0);
  CHECK(static_cast<std::uint64_t>(store.counters()[CacheCounter::bytes]) <= cap + 16 * 1024);
  CHECK(store.read_step(hash_bytes("s29")));
}

TEST_CASE("cache store: an entry from elsewhere is stored as it came, only under its own keys "
          "(issue 41)",
          "[cache]")
{
  test::TempDir dir;
  CacheStore store(dir.path("cache"), {1ULL << 30, 0});
  const Digest manifest_key = hash_bytes("manifest");
  const Digest key = hash_bytes("result");
  CacheEntry entry = entry_of_size(100);
  entry.manifest_key = manifest_key;
  entry.result_key = key;
  entry.object_digest = hash_bytes(entry.object);
  SECTION("its own keys and object: stored, and read back as it came")
  {
    CHECK(store.write_foreign_entry(manifest_key, key, entry).empty());
    auto read = store.read_entry(key);
    REQUIRE(read);
    CHECK(*read == entry);
  }
  SECTION("another result's entry: refused, nothing written")
  {
    entry.result_key = hash_bytes("another result");
    CHECK_THAT(store.write_foreign_entry(manifest_key, key, entry),
               Catch::Contains("stored under another key"));
    CHECK_FALSE(store.read_entry(key));
    CHECK(store.counters()[CacheCounter::stores] == 0);
  }
  SECTION("another manifest's entry: refused")
  {
    entry.manifest_key = hash_bytes("another manifest");
    CHECK_THAT(store.write_foreign_entry(manifest_key, key, entry),
               Catch::Contains("another manifest"));
    CHECK_FALSE(store.read_entry(key));
  }
  SECTION("an object that is not the one its digest names: refused")
  {
    entry.object += "x";
    CHECK_FALSE(foreign_entry_refusal(entry, manifest_key, key).empty());
    CHECK_FALSE(store.write_foreign_entry(manifest_key, key, entry).empty());
    CHECK_FALSE(store.read_entry(key));
  }
}
