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
  const Digest key = hash_bytes("an entry");
  cache.store().write_entry(key, stored);

  Record record;
  record.output.hash = hash_bytes(stored.object);
  SECTION("a record that names no entry")
  {
    CHECK_FALSE(cache.entry_for_record(record));
  }
  SECTION("the entry named, holding those bytes: a hit")
  {
    record.cache_entry = key;
    auto entry = cache.entry_for_record(record);
    REQUIRE(entry);
    CHECK(entry->object == stored.object);
    CHECK(cache.store().counters()[CacheCounter::hits] == 1);
    CHECK(cache.store().counters()[CacheCounter::saved_ns] == stored.compile_ns);
  }
  SECTION("the entry named holds other bytes: not served, not counted")
  {
    record.cache_entry = key;
    record.output.hash = hash_bytes("what the record's compile wrote");
    CHECK_FALSE(cache.entry_for_record(record));
    CHECK(cache.store().counters()[CacheCounter::hits] == 0);
  }
  SECTION("the entry named is gone (evicted)")
  {
    record.cache_entry = hash_bytes("another entry");
    CHECK_FALSE(cache.entry_for_record(record));
  }
}
