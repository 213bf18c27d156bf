#include "cache/object_cache.hpp"

#include "cache/entry_verifier.hpp"
#include "protocol/remote_protocol.hpp"

#include "../temp_dir.hpp"
#include "fake_remote.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

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

namespace {

// One machine's view of a checkout `ck` (k.cu including k.h) built in `ck/build`.
struct Machine {
  const test::TempDir& dir;
  ObjectCache cache;

  CompileIdentity identity() const
  {
    const std::string src = dir.path("ck/k.cu");
    return {{"-c", src},
            {},
            dir.path("ck/build"),
            src,
            "/usr/local/cuda/bin/nvcc",
            dir.path("ck/build"),
            dir.path("ck/build/k.o")};
  }
  // Compiles with k.h holding `header`: stores the object `object`. Its entry's key.
  Digest store_with_header(const std::string& header, const std::string& object)
  {
    dir.write("ck/k.h", header);
    Record record;
    record.object = dir.write("ck/build/k.o", object);
    record.output.hash = hash_bytes(object);
    record.console_mode = "captured";
    record.working_dir = dir.path("ck/build");
    record.source = dir.path("ck/k.cu");
    record.inputs.push_back({{dir.path("ck/k.h"), hash_bytes(header)}, InputRole::header, {}});
    auto stored = cache.store_result(identity(), record, {"nvcc"}, {});
    REQUIRE(stored.key);
    return *stored.key;
  }
  std::optional<CacheHit> look_up_with_header(const std::string& header)
  {
    dir.write("ck/k.h", header);
    FileHasher hasher;
    return cache.lookup(identity(), hasher, {});
  }
};

// A remote that answers every manifest Action with `manifest` and every result Action with
// `entry` (its object as a blob of its own): a fake nvfresh-remote that hands out files.
void serve_from_fake_remote(const test::TempDir& dir, ObjectCache& cache, const Machine& machine,
                            const Manifest& manifest, const CacheEntry& entry)
{
  CacheEntry described = entry;
  described.object.clear();
  const std::string object_output = object_output_path(
    machine.identity(), machine.identity().object, PathMap(tree_roots_of(dir.path("ck/build"))));
  const std::string empty = dir.write("remote/empty", "");
  const HelperAnswer manifest_result{
    {{"nvfresh.manifest", dir.write("remote/manifest", serialize_manifest(manifest))}},
    empty,
    empty,
    0};
  const HelperAnswer entry_result{
    {{object_output, dir.write("remote/object", entry.object)},
     {"nvfresh.entry", dir.write("remote/entry", serialize_cache_entry(described))}},
    empty,
    empty,
    static_cast<std::int64_t>(entry.object.size())};
  dir.write("remote/manifest.json", to_json(manifest_result, HelperVerb::get).dump());
  dir.write("remote/entry.json", to_json(entry_result, HelperVerb::get).dump());
  const std::string helper = dir.write(
    "remote/nvfresh-remote",
    "#!/bin/sh\nif grep -q NVFRESH_RESULT_KEY \"$2\"; then answer=entry; else answer=manifest; fi\n"
    "cp \"" +
      dir.path("remote") + "/$answer.json\" \"$(dirname \"$2\")/result.json\"\n");
  std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
  RemoteSettings settings;
  settings.url = "grpc://fake";
  settings.helper = helper;
  cache.storage().use_remote(settings, {});
}

CacheSettings settings_named(const test::TempDir& dir, const std::string& name)
{
  CacheSettings settings = settings_in(dir);
  settings.dir = dir.path(name);
  return settings;
}

}  // namespace

TEST_CASE("remote: a fetched entry must carry the keys it was asked for (issue 41, R1)", "[cache]")
{
  test::TempDir dir;
  dir.write("ck/k.cu", "#include \"k.h\"\n");
  make_build_tree(dir, "ck/build", "ck");
  Machine ci{dir, ObjectCache(settings_named(dir, "ci"))};
  const CacheEntry ci_entry = *ci.cache.store().read_entry(ci.store_with_header("1", "CI's"));
  const Manifest manifest = *ci.cache.store().read_manifest(ci_entry.manifest_key);
  Machine attacker{dir, ObjectCache(settings_named(dir, "m"))};
  const CacheEntry attacker_entry =
    *attacker.cache.store().read_entry(attacker.store_with_header("666", "the attacker's"));

  Machine b{dir, ObjectCache(settings_named(dir, "b"))};
  SECTION("CI's result: served")
  {
    serve_from_fake_remote(dir, b.cache, b, manifest, ci_entry);
    auto hit = b.look_up_with_header("1");
    REQUIRE(hit);
    CHECK(hit->entry.object == "CI's");
    CHECK(b.cache.store().counters()[CacheCounter::remote_hits] == 1);
  }
  SECTION("another compile's result copied onto CI's Action: refused, never stored")
  {
    serve_from_fake_remote(dir, b.cache, b, manifest, attacker_entry);
    CHECK_FALSE(b.look_up_with_header("1"));
    CHECK(b.cache.store().counters()[CacheCounter::remote_refused] == 1);
    CHECK(b.cache.store().counters()[CacheCounter::remote_hits] == 0);
    CHECK(b.cache.store().entry_keys().empty());
  }
  SECTION("its key line names another manifest: refused")
  {
    CacheEntry other = ci_entry;
    other.manifest_key = hash_bytes("another manifest");
    serve_from_fake_remote(dir, b.cache, b, manifest, other);
    CHECK_FALSE(b.look_up_with_header("1"));
    CHECK(b.cache.store().counters()[CacheCounter::remote_refused] == 1);
  }
}

TEST_CASE("remote: a manifest entry must name its own input set's result (issue 41, R2)", "[cache]")
{
  test::TempDir dir;
  dir.write("ck/k.cu", "#include \"k.h\"\n");
  make_build_tree(dir, "ck/build", "ck");
  Machine ci{dir, ObjectCache(settings_named(dir, "ci"))};
  const CacheEntry ci_entry = *ci.cache.store().read_entry(ci.store_with_header("1", "CI's"));
  Manifest manifest = *ci.cache.store().read_manifest(ci_entry.manifest_key);
  // B compiled VALUE 666 itself: its own cache holds that entry.
  Machine b{dir, ObjectCache(settings_named(dir, "b"))};
  const Digest b_key = b.store_with_header("666", "B's object of 666");

  REQUIRE(manifest.entries.size() == 1);
  CHECK(result_key(ci_entry.manifest_key, manifest.entries[0]) == manifest.entries[0].result);
  manifest.entries[0].result = b_key;  // CI's input set, relinked to B's result
  serve_from_fake_remote(dir, b.cache, b, manifest, ci_entry);
  CHECK_FALSE(b.look_up_with_header("1"));
  CHECK(b.cache.store().counters()[CacheCounter::remote_refused] == 1);
  // Not kept in the local manifest either: the next lookup does not find it there.
  const auto local = b.cache.store().read_manifest(ci_entry.manifest_key);
  REQUIRE(local);
  for (const auto& entry : local->entries) {
    CHECK(result_key(ci_entry.manifest_key, entry) == entry.result);
  }
  CHECK_FALSE(b.look_up_with_header("1"));
}

TEST_CASE("remote: through the storage's backend, a store uploads and another machine's miss "
          "fetches it",
          "[cache]")
{
  test::TempDir dir;
  dir.write("ck/k.cu", "#include \"k.h\"\n");
  make_build_tree(dir, "ck/build", "ck");
  test::FakeRemote::State remote;
  Machine ci{dir, ObjectCache(settings_named(dir, "ci"))};
  ci.cache.storage().use_remote(std::make_unique<test::FakeRemote>(remote), {});
  const Digest key = ci.store_with_header("1", "CI's");
  CHECK(remote.uploads == 1);
  CHECK(remote.manifests.size() == 1);
  CHECK(ci.cache.store().counters()[CacheCounter::remote_uploads] == 1);
  // A hit in CI's own cache asks nothing.
  const int calls = remote.calls;
  REQUIRE(ci.look_up_with_header("1"));
  CHECK(remote.calls == calls);

  Machine b{dir, ObjectCache(settings_named(dir, "b"))};
  b.cache.storage().use_remote(std::make_unique<test::FakeRemote>(remote), {});
  auto hit = b.look_up_with_header("1");
  REQUIRE(hit);
  CHECK(hit->key == key);
  CHECK(hit->entry.object == "CI's");
  CHECK(remote.calls == calls + 2);  // the manifest, then the entry
  CHECK(b.cache.store().counters()[CacheCounter::remote_hits] == 1);
  CHECK(b.cache.store().read_entry(key));  // kept locally: the next lookup is local
  REQUIRE(b.look_up_with_header("1"));
  CHECK(remote.calls == calls + 2);
}

TEST_CASE("remote: relinked manifest entries are left out, the others kept", "[cache]")
{
  const Digest manifest_key = hash_bytes("manifest");
  std::vector<ManifestEntry> entries(3);
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].inputs.push_back({std::string(k_source_token) + "/k.h",
                                 hash_bytes(std::to_string(i)),
                                 "header",
                                 "",
                                 {},
                                 std::nullopt});
    entries[i].result = result_key(manifest_key, entries[i]);
  }
  entries[1].result = entries[0].result;             // relinked to another set's result
  entries[2].inputs[0].hash = hash_bytes("edited");  // its inputs rewritten, its key not
  const ManifestEntry kept = entries[0];
  CHECK(drop_relinked_entries(manifest_key, entries) == 2);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].result == kept.result);
  CHECK(drop_relinked_entries(hash_bytes("another manifest"), entries) == 1);
}

TEST_CASE("verify compares a compile with the object an entry holds, not the digests it claims "
          "(issue 41, R3)",
          "[cache]")
{
  test::TempDir dir;
  ObjectCache cache(settings_in(dir));
  const std::string ci_ptx = ".version 9.0\n.target sm_90\n.address_size 64\n// CI's\n"
                             ".visible .entry k() { ret; }\n";
  const std::string forged_ptx = ".version 9.0\n.target sm_90\n.address_size 64\n"
                                 ".visible .entry k() { trap; ret; }\n";
  CacheEntry ci;
  ci.object = ci_ptx;
  const std::map<std::string, Digest> compiled = held_components(ci);
  REQUIRE_FALSE(compiled.empty());
  CacheEntry forged;
  forged.object = forged_ptx;
  forged.components = compiled;  // claims CI's digests, holds another object
  REQUIRE(held_components(forged) != compiled);
  const Digest key = hash_bytes("entry");
  cache.store().write_entry(key, forged);

  CHECK_FALSE(cache.note_verified(key, forged, compiled));
  CHECK(cache.store().counters()[CacheCounter::verify_mismatches] == 1);
  CHECK(cache.store().counters()[CacheCounter::verified] == 0);

  CacheEntry honest = ci;
  honest.components = {{"what an older nvfresh called it", hash_bytes("x")}};
  CHECK(cache.note_verified(key, honest, compiled));
  CHECK(cache.store().counters()[CacheCounter::verified] == 1);
}
