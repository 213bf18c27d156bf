#include "cache/manifest.hpp"
#include "cache/tree_roots.hpp"
#include "util/hasher.hpp"
#include "util/text_fields.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

ManifestEntry entry(const std::string& name, std::int64_t time)
{
  ManifestEntry e;
  e.result = hash_bytes(name);
  e.time_ns = time;
  e.inputs = {{std::string(k_source_token) + "/k.cu", hash_bytes("k"), "source", "-", {}},
              {"/usr/local/cuda/include/cuda_runtime.h",
               hash_bytes("rt"),
               "header",
               "host,compute_80",
               {4096, 1'700'000'000'000'000'001, 1'700'000'000'000'000'002, 77, 2049}},
              {"path with\ttab and\nnewline", hash_bytes("odd"), "header", "sm_90a", {}}};
  const std::string source(k_source_token);
  for (const std::string& probe : {source + "/shadow/value.h", source + "/shadow/other.h",
                                   std::string("/usr/include/missing.h"), std::string("/top.h"),
                                   std::string("//odd.h"), std::string("whole")}) {
    add_probe(e.probes, probe);
  }
  e.lookups = {{"gcc", "/usr/bin/gcc", true}, {"cicc", "", false}};
  e.probe_dirs = {{std::string(k_source_token) + "/shadow", 12, 34, 1'700'000'000'000'000'000, 5},
                  {"/usr/include", 99, 1, 7, 8}};
  return e;
}

}  // namespace

TEST_CASE("manifest: round trip, every field, odd bytes in paths", "[cache]")
{
  Manifest manifest;
  manifest.entries = {entry("a", 2), entry("b", 1)};
  manifest.entries[1].bound_build_root = "/home/a/build";
  manifest.entries[1].bound_source_root = "/home/a/src";
  manifest.entries[1].inputs[2].code = hash_bytes("its code without comments");
  auto parsed = parse_manifest(serialize_manifest(manifest));
  REQUIRE(parsed);
  CHECK(*parsed == manifest);
}

TEST_CASE("manifest: damaged text is no manifest, with the reason", "[cache]")
{
  Manifest manifest;
  manifest.entries = {entry("a", 1)};
  const std::string text = serialize_manifest(manifest);
  std::string error;
  CHECK_FALSE(parse_manifest(text.substr(0, text.size() / 2), &error));
  CHECK_FALSE(error.empty());
  std::string flipped = text;
  flipped[flipped.size() / 2] ^= 0x20;
  CHECK_FALSE(parse_manifest(flipped, &error));
  CHECK_FALSE(parse_manifest("", &error));
}

TEST_CASE("manifest: add_entry puts the newest first, replaces its result, keeps the limit",
          "[cache]")
{
  Manifest manifest;
  for (size_t i = 0; i < k_manifest_entry_limit + 5; ++i) {
    add_entry(manifest, entry("r" + std::to_string(i), static_cast<std::int64_t>(i)));
  }
  REQUIRE(manifest.entries.size() == k_manifest_entry_limit);
  CHECK(manifest.entries.front().result ==
        hash_bytes("r" + std::to_string(k_manifest_entry_limit + 4)));
  add_entry(manifest, entry("r10", 99));
  CHECK(manifest.entries.front().result == hash_bytes("r10"));
  size_t count = 0;
  for (const auto& e : manifest.entries) {
    count += e.result == hash_bytes("r10") ? 1 : 0;
  }
  CHECK(count == 1);
}

TEST_CASE("manifest: input lines without stamps (written before them) still read", "[cache]")
{
  Manifest manifest;
  manifest.entries = {entry("a", 2)};
  std::string text = serialize_manifest(manifest);
  // The stamped line as a manifest before stamps spelled it, with the checksum made again.
  const std::string stamped = "\t4096\t1700000000000000001\t1700000000000000002\t77\t2049\t";
  const size_t at = text.find(stamped);
  REQUIRE(at != std::string::npos);
  text.replace(at, stamped.size(), "\t");
  text.erase(text.rfind("checksum\t"));
  text += "checksum\t" + hash_bytes(text).to_hex() + "\n";
  auto parsed = parse_manifest(text);
  REQUIRE(parsed);
  manifest.entries[0].inputs[1].stamp = {};
  CHECK(*parsed == manifest);
}

TEST_CASE("manifest: older 'probe' lines read as runs of one directory, the same probes", "[cache]")
{
  Manifest manifest;
  manifest.entries = {entry("a", 2)};
  const std::string text = serialize_manifest(manifest);
  // The same manifest as an older nvfresh wrote it: a line per probe.
  std::string old_text = "nvfresh-manifest\t1\n";
  std::vector<std::string_view> lines;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t end = rest.find('\n');
    lines.push_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  for (std::string_view line : lines) {
    if (line.starts_with("probes\t")) {
      auto fields = split_fields(line);
      REQUIRE(fields);
      for (size_t i = 2; i < fields->size(); ++i) {
        old_text += "probe\t";
        append_escaped_field(old_text, probe_run_path((*fields)[1], (*fields)[i]));
        old_text += '\n';
      }
    } else if (!line.starts_with("nvfresh-manifest") && !line.starts_with("checksum")) {
      old_text += std::string(line) + "\n";
    }
  }
  old_text += "checksum\t" + hash_bytes(old_text).to_hex() + "\n";
  auto parsed = parse_manifest(old_text);
  REQUIRE(parsed);
  CHECK(*parsed == manifest);
}

TEST_CASE("manifest: entries one at a time, newest first, up to the one that stops the reader",
          "[cache]")
{
  Manifest manifest;
  for (int n = 0; n < 5; ++n) {
    manifest.entries.push_back(entry("e" + std::to_string(n), 10 - n));
  }
  const std::string text = serialize_manifest(manifest);
  std::vector<ManifestEntry> seen;
  CHECK(for_each_manifest_entry(text, [&](ManifestEntry& e) {
    seen.push_back(e);
    return seen.size() == 2;
  }));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == manifest.entries[0]);
  CHECK(seen[1] == manifest.entries[1]);

  seen.clear();
  CHECK(for_each_manifest_entry(text, [&](ManifestEntry& e) {
    seen.push_back(e);
    return false;
  }));
  CHECK(seen == manifest.entries);

  // A damaged text hands over nothing; a line that does not parse ends the reading there.
  std::string torn = text;
  torn[torn.size() / 2] ^= 1;
  std::string error;
  CHECK_FALSE(for_each_manifest_entry(
    torn,
    [&](ManifestEntry&) {
      FAIL("an entry of a damaged manifest");
      return false;
    },
    &error));
  CHECK(error.find("checksum") != std::string::npos);
}

TEST_CASE("manifest: no more entries are read than a manifest keeps", "[cache]")
{
  Manifest manifest;
  for (size_t n = 0; n < k_manifest_entry_limit + 3; ++n) {
    manifest.entries.push_back(entry("e" + std::to_string(n), 100 - static_cast<int>(n)));
  }
  size_t count = 0;
  CHECK(for_each_manifest_entry(serialize_manifest(manifest), [&](ManifestEntry&) {
    ++count;
    return false;
  }));
  CHECK(count == k_manifest_entry_limit);
  auto parsed = parse_manifest(serialize_manifest(manifest));
  REQUIRE(parsed);
  CHECK(parsed->entries.size() == k_manifest_entry_limit);
}

TEST_CASE("manifest: an entry the reader does not want is not parsed past its first line",
          "[cache]")
{
  Manifest manifest;
  for (int n = 0; n < 3; ++n) {
    manifest.entries.push_back(entry("e" + std::to_string(n), 10 - n));
  }
  manifest.entries[1].bound_source_root = "/elsewhere/src";
  std::vector<ManifestEntry> seen;
  CHECK(for_each_manifest_entry(
    serialize_manifest(manifest),
    [&](ManifestEntry& e) {
      seen.push_back(e);
      return false;
    },
    nullptr, [](const ManifestEntry& e) { return e.bound_source_root.empty(); }));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == manifest.entries[0]);
  CHECK(seen[1] == manifest.entries[2]);
}
