#include "cache/object_cache.hpp"

#include "../temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

CacheSettings settings_in(const test::TempDir& dir)
{
  CacheSettings settings;
  settings.dir = dir.path("cache");
  settings.max_bytes = 1ULL << 30;
  return settings;
}

}  // namespace

TEST_CASE("the entry a record names serves only the object the record describes", "[cache]")
{
  test::TempDir dir;
  ObjectCache cache(settings_in(dir));
  CacheEntry stored;
  stored.object = "the object's bytes";
  stored.compile_ns = 5'000'000'000;
  stored.bound = CacheEntry::Binding{};
  const Digest key = hash_bytes("an entry");
  cache.store().write_entry(key, stored);
  const std::string tree = dir.path("build");

  Record record;
  record.output.hash = hash_bytes(stored.object);
  SECTION("a record that names no entry")
  {
    CHECK_FALSE(cache.entry_for_record(record, tree));
  }
  SECTION("the entry named, holding those bytes: a hit")
  {
    record.cache_entry = key;
    std::string elsewhere = "not set";
    auto entry = cache.entry_for_record(record, tree, &elsewhere);
    REQUIRE(entry);
    CHECK(entry->object == stored.object);
    CHECK(elsewhere.empty());
    CHECK(cache.store().counters()[CacheCounter::hits] == 1);
    CHECK(cache.store().counters()[CacheCounter::saved_ns] == stored.compile_ns);
  }
  SECTION("the entry named holds other bytes: not served, not counted")
  {
    record.cache_entry = key;
    record.output.hash = hash_bytes("what the record's compile wrote");
    CHECK_FALSE(cache.entry_for_record(record, tree));
    CHECK(cache.store().counters()[CacheCounter::hits] == 0);
  }
  SECTION("the entry named is gone (evicted)")
  {
    record.cache_entry = hash_bytes("another entry");
    CHECK_FALSE(cache.entry_for_record(record, tree));
  }
  SECTION("an entry that does not say what its object names is looked up, not restored")
  {
    stored.bound.reset();
    cache.store().write_entry(key, stored);
    record.cache_entry = key;
    CHECK_FALSE(cache.entry_for_record(record, tree));
  }
}

TEST_CASE("the entry a record names is restored only where its binding allows", "[cache]")
{
  test::TempDir dir;
  dir.write("ck/build/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + dir.path("ck") + "\n");
  dir.write("ck2/build/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + dir.path("ck2") + "\n");
  CacheSettings settings = settings_in(dir);
  CacheEntry stored;
  stored.object = "host code naming the checkout";
  stored.bound = CacheEntry::Binding{"", dir.path("ck")};
  const Digest key = hash_bytes("an entry naming ck");
  ObjectCache(settings).store().write_entry(key, stored);
  Record record;
  record.output.hash = hash_bytes(stored.object);
  record.cache_entry = key;
  SECTION("its own checkout: restored")
  {
    ObjectCache cache(settings);
    std::string elsewhere;
    CHECK(cache.entry_for_record(record, dir.path("ck/build"), &elsewhere));
    CHECK(elsewhere.empty());
  }
  SECTION("another checkout: not restored, not counted")
  {
    ObjectCache cache(settings);
    CHECK_FALSE(cache.entry_for_record(record, dir.path("ck2/build")));
    CHECK(cache.store().counters()[CacheCounter::hits] == 0);
  }
  SECTION("another checkout with cache_across_checkouts: restored, and said so")
  {
    settings.across_checkouts = true;
    ObjectCache cache(settings);
    std::string elsewhere;
    CHECK(cache.entry_for_record(record, dir.path("ck2/build"), &elsewhere));
    CHECK(elsewhere == "served from another checkout: names " + dir.path("ck"));
  }
}

namespace {

// A CMake build tree at `build` whose checkout is `source`.
void make_build_tree(const test::TempDir& dir, const std::string& build, const std::string& source)
{
  dir.write(build + "/CMakeCache.txt", "CMAKE_HOME_DIRECTORY:INTERNAL=" + dir.path(source) + "\n");
}

// Stores, as compiled in build tree `build`, an object whose bytes are `object` (where "@SRC@" and
// "@BUILD@" become the tree's roots).
void store_compile(ObjectCache& cache, const test::TempDir& dir, const std::string& build,
                   const std::string& source, std::string object)
{
  for (const auto& [token, root] : {std::pair<std::string, std::string>{"@SRC@", dir.path(source)},
                                    {"@BUILD@", dir.path(build)}}) {
    for (size_t at = object.find(token); at != std::string::npos; at = object.find(token)) {
      object.replace(at, token.size(), root);
    }
  }
  Record record;
  record.object = dir.write(build + "/k.o", object);
  record.output.hash = hash_bytes(object);
  record.console_mode = "captured";
  record.working_dir = dir.path(build);
  record.source = dir.path(source + "/k.cu");
  const CompileIdentity identity{{"-c", record.source},      {},
                                 record.working_dir,         record.source,
                                 "/usr/local/cuda/bin/nvcc", dir.path(build)};
  REQUIRE(cache.store_result(identity, record, {"nvcc"}, {}).stored);
}

std::optional<CacheHit> look_up(ObjectCache& cache, const test::TempDir& dir,
                                const std::string& build, const std::string& source)
{
  FileHasher hasher;
  const std::string src = dir.path(source + "/k.cu");
  return cache.lookup(
    {{"-c", src}, {}, dir.path(build), src, "/usr/local/cuda/bin/nvcc", dir.path(build)}, hasher,
    {});
}

}  // namespace

TEST_CASE("an entry is bound only to the roots its object names", "[cache]")
{
  test::TempDir dir;
  for (const std::string checkout : {"ck", "ck2"}) {
    dir.write(checkout + "/k.cu", "__global__ void k() {}\n");
  }
  make_build_tree(dir, "ck/build-a", "ck");
  make_build_tree(dir, "ck/build-b", "ck");
  make_build_tree(dir, "ck2/build", "ck2");
  CacheSettings settings = settings_in(dir);
  ObjectCache cache(settings);
  SECTION("naming the checkout (__FILE__): every build dir of it, not another checkout")
  {
    store_compile(cache, dir, "ck/build-a", "ck", "host code \"@SRC@/k.cu\"");
    auto hit = look_up(cache, dir, "ck/build-b", "ck");
    REQUIRE(hit);
    CHECK(hit->elsewhere.empty());
    CHECK_FALSE(look_up(cache, dir, "ck2/build", "ck2"));
  }
  SECTION("naming the build dir (-g): that build dir only")
  {
    store_compile(cache, dir, "ck/build-a", "ck", "DW_AT_comp_dir @BUILD@");
    CHECK(look_up(cache, dir, "ck/build-a", "ck"));
    CHECK_FALSE(look_up(cache, dir, "ck/build-b", "ck"));
  }
  SECTION("naming neither: any tree")
  {
    store_compile(cache, dir, "ck/build-a", "ck", "plain device code");
    CHECK(look_up(cache, dir, "ck/build-b", "ck"));
    CHECK(look_up(cache, dir, "ck2/build", "ck2"));
  }
  SECTION("a module id (-rdc) hashes the source's path, which compare factors out: any tree")
  {
    store_compile(cache, dir, "ck/build-a", "ck", "_2ca31b1d_4_k_cu__Z1kv");
    CHECK(look_up(cache, dir, "ck2/build", "ck2"));
  }
  SECTION("with cache_across_checkouts, another checkout is served, and said so")
  {
    settings.across_checkouts = true;
    ObjectCache across(settings);
    store_compile(across, dir, "ck/build-a", "ck", "host code \"@SRC@/k.cu\"");
    auto hit = look_up(across, dir, "ck2/build", "ck2");
    REQUIRE(hit);
    CHECK(hit->elsewhere == "served from another checkout: names " + dir.path("ck"));
  }
}

TEST_CASE("cache_across_checkouts: off by default, on from the environment or the config file",
          "[cache][config]")
{
  test::TempDir dir;
  const Environment home{{"HOME", dir.path()}};
  CHECK_FALSE(cache_settings(load_config(home), home).across_checkouts);
  const Environment env{{"HOME", dir.path()}, {"NVFRESH_CACHE_ACROSS_CHECKOUTS", "1"}};
  CHECK(cache_settings(load_config(env), env).across_checkouts);
  const std::string file = dir.write("nvfresh.conf", "cache_across_checkouts = yes\n");
  const Environment configured{{"HOME", dir.path()}, {"NVFRESH_CONFIG", file}};
  CHECK(cache_settings(load_config(configured), configured).across_checkouts);
}

namespace {

// The input set stored for the entry `result`, from its manifest.
std::optional<ManifestEntry> stored_input_set(ObjectCache& cache, const Digest& result)
{
  auto entry = cache.store().read_entry(result);
  REQUIRE(entry);
  auto manifest = cache.store().read_manifest(entry->manifest_key);
  REQUIRE(manifest);
  for (const auto& stored : manifest->entries) {
    if (stored.result == result) {
      return stored;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE(
  "a manifest keeps the settled stamps of its inputs, and a lookup trusts only an equal one",
  "[cache]")
{
  test::TempDir dir;
  const std::string settled = "/usr/include/stdio.h";  // changed long ago: its stamp has settled
  const std::string fresh = dir.write("ck/value.h", "#define VALUE 1\n");
  dir.write("ck/k.cu", "__global__ void k() {}\n");
  make_build_tree(dir, "ck/build-a", "ck");
  make_build_tree(dir, "ck/build-b", "ck");
  ObjectCache cache(settings_in(dir));
  Record record;
  record.object = dir.write("ck/build-a/k.o", "plain device code");
  record.output.hash = hash_bytes("plain device code");
  record.console_mode = "captured";
  record.working_dir = dir.path("ck/build-a");
  record.source = dir.path("ck/k.cu");
  FileHasher hasher;
  for (const std::string& path : {settled, fresh}) {
    auto fingerprint = hasher.fingerprint(path).fingerprint;
    REQUIRE(fingerprint);
    record.inputs.push_back({*fingerprint, InputRole::header, {}});
  }
  const CompileIdentity identity{{"-c", record.source},      {},
                                 record.working_dir,         record.source,
                                 "/usr/local/cuda/bin/nvcc", dir.path("ck/build-a")};
  const StoreOutcome outcome = cache.store_result(identity, record, {"nvcc"}, {});
  REQUIRE(outcome.key);
  ManifestEntry entry = *stored_input_set(cache, *outcome.key);
  REQUIRE(entry.inputs.size() == 2);
  const FileStat now = stat_file(settled);
  CHECK(entry.inputs[0].stamp ==
        InputStamp{now.size, now.mtime_ns, now.ctime_ns, now.inode, now.device});
  CHECK_FALSE(entry.inputs[1].stamp.known());  // changed just now: a rewrite could keep its stat
  REQUIRE(look_up(cache, dir, "ck/build-b", "ck"));

  // The stamp vouches for the content: a stored hash that the file does not have (no compile
  // stores that, so it shows the file was not read) is believed while the stamp is the file's...
  const Digest manifest_key = cache.store().read_entry(*outcome.key)->manifest_key;
  Manifest manifest;
  manifest.entries = {entry};
  manifest.entries[0].inputs[0].hash = hash_bytes("not what stdio.h holds");
  cache.store().update_manifest(manifest_key, [&](Manifest& m) { m = manifest; });
  CHECK(look_up(cache, dir, "ck/build-b", "ck"));
  // ... and only then: on another device the same inode is another file, which is hashed.
  manifest.entries[0].inputs[0].stamp.device += 1;
  cache.store().update_manifest(manifest_key, [&](Manifest& m) { m = manifest; });
  CHECK_FALSE(look_up(cache, dir, "ck/build-b", "ck"));
}

TEST_CASE("object cache: a manifest's probe runs map onto another tree as each path alone",
          "[cache]")
{
  PathMap here({"/home/a/build", "/home/a/src", "", ""});
  PathMap there({"/ci/job/out", "/ci/job/checkout", "", ""});
  std::vector<std::string> keys;
  for (const std::string& path :
       {"/home/a/src/include/a.h", "/home/a/src/include/b.h", "/home/a/src/include/sub/c.h",
        "/home/a/src/include/d.h", "/home/a/build/gen/e.h", "/home/a/build/f.h", "/home/a/build",
        "/usr/local/cuda/include/g.h", "/usr/local/cuda/include/h.h", "/top.h", "//odd.h",
        "relative.h", "dir/", ""}) {
    keys.push_back(here.to_key(path));
  }
  // A name that spells a root's token maps as the whole path does (no file has one, but the map
  // must not differ where one did); a path outside both roots with a token in it stays as given.
  keys.push_back(here.to_key("/home/a/src/include/x.h") + "/" + here.to_key("/home/a/build"));
  keys.push_back("/usr/include/" + here.to_key("/home/a/build") + "/y.h");
  std::vector<ProbeRun> runs;
  std::vector<std::string> one_by_one;
  for (const auto& key : keys) {
    add_probe(runs, key);
    one_by_one.push_back(there.to_tree(key));
  }
  CHECK(probe_count(runs) == keys.size());
  CHECK(runs.size() < keys.size());  // runs of one directory share it
  std::vector<std::string> back;
  for (const auto& run : runs) {
    for (const auto& name : run.names) {
      back.push_back(probe_run_path(run.dir, name));
    }
  }
  CHECK(back == keys);  // in order, each as it was added
  std::vector<std::string> mapped = probe_paths(probe_groups_in_tree(runs, there));
  std::sort(mapped.begin(), mapped.end());
  std::sort(one_by_one.begin(), one_by_one.end());
  CHECK(mapped == one_by_one);
  CHECK(std::count(one_by_one.begin(), one_by_one.end(), "/ci/job/checkout/include/a.h") == 1);
  CHECK(std::count(one_by_one.begin(), one_by_one.end(), "/ci/job/out/gen/e.h") == 1);
  CHECK(std::count(one_by_one.begin(), one_by_one.end(),
                   "/ci/job/checkout/include/x.h//ci/job/out") == 1);
}
