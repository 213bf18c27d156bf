// libFuzzer target for the hash cache of lib/freshness/file_hasher.cpp: the stat-keyed file
// ("<record root>/hash-cache") that every compile of a build tree appends to and reads. The input
// is the cache file; a FileHasher loads it when it fingerprints a probe file. Properties: loading
// never crashes or throws; an entry whose stat does not match the probe (the fuzzer cannot know its
// inode and times) is never used, so the probe's fingerprint is its real content hash.
// Seeds: tests/fuzz/corpus/hash_cache (hash-cache files of real builds).
#include "freshness/file_hasher.hpp"
#include "fuzz_support.hpp"
#include "util/hasher.hpp"

#include <string>

namespace {

constexpr std::string_view k_probe_content = "#define PROBE 1\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const nvfresh::fuzz::ScratchDir& dir = nvfresh::fuzz::ScratchDir::get();
  static const std::string probe = dir.write("probe.h", k_probe_content);
  static const nvfresh::Digest probe_hash = nvfresh::hash_bytes(k_probe_content);
  const std::string cache = dir.write("hash-cache", nvfresh::fuzz::as_text(data, size));

  nvfresh::FileHasher hasher(cache, 0);
  const nvfresh::FingerprintResult result = hasher.fingerprint(probe);
  if (!result.fingerprint || result.fingerprint->hash != probe_hash) {
    nvfresh::fuzz::fail("a cache entry that does not match the file's stat is never used");
  }
  return 0;
}
