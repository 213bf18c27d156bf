// libFuzzer target for the object cache's files (lib/cache/manifest.cpp, cache_entry.cpp, and the
// store's reader in cache_store.cpp): bytes that any process of the user, or a damaged disk, may
// have left in ~/.cache/nvfresh. The first byte picks the reader: even, a manifest; odd, an entry.
// Both are read as the store reads them (from a file, a zstd frame or not) and as text; neither
// may crash or throw, and what one accepts must survive serialize -> parse unchanged.
// Seeds: tests/fuzz/corpus/cache (a manifest and an entry of an nvcc 13.0 compile, as text).
#include "cache/cache_store.hpp"
#include "fuzz_support.hpp"

#include <optional>
#include <string>

namespace {

void check_manifest(const std::string& text)
{
  auto manifest = nvfresh::parse_manifest(text);
  if (manifest && nvfresh::parse_manifest(nvfresh::serialize_manifest(*manifest)) != manifest) {
    nvfresh::fuzz::fail("parse_manifest(serialize_manifest(m)) must equal m");
  }
}

void check_entry(const std::string& text)
{
  auto entry = nvfresh::parse_cache_entry(text);
  if (entry && nvfresh::parse_cache_entry(nvfresh::serialize_cache_entry(*entry)) != entry) {
    nvfresh::fuzz::fail("parse_cache_entry(serialize_cache_entry(e)) must equal e");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const bool entry = (data[0] & 1) != 0;
  const std::string_view bytes = nvfresh::fuzz::as_text(data + 1, size - 1);
  static nvfresh::CacheStore store(nvfresh::fuzz::ScratchDir::get().file("cache"), {1ULL << 30, 0});
  const nvfresh::Digest key = nvfresh::hash_bytes("fuzz");
  if (entry) {
    nvfresh::fuzz::ScratchDir::get().write("entry", bytes);
    std::filesystem::create_directories(std::filesystem::path(store.entry_file(key)).parent_path());
    std::filesystem::copy_file(nvfresh::fuzz::ScratchDir::get().file("entry"),
                               store.entry_file(key),
                               std::filesystem::copy_options::overwrite_existing);
    if (auto read = store.read_entry(key)) {
      check_entry(nvfresh::serialize_cache_entry(*read));
    }
    check_entry(nvfresh::fuzz::sealed(bytes));
  } else {
    nvfresh::fuzz::ScratchDir::get().write("manifest", bytes);
    std::filesystem::create_directories(
      std::filesystem::path(store.manifest_file(key)).parent_path());
    std::filesystem::copy_file(nvfresh::fuzz::ScratchDir::get().file("manifest"),
                               store.manifest_file(key),
                               std::filesystem::copy_options::overwrite_existing);
    if (auto read = store.read_manifest(key)) {
      check_manifest(nvfresh::serialize_manifest(*read));
    }
    check_manifest(nvfresh::fuzz::sealed(bytes));
  }
  return 0;
}
