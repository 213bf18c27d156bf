// Test tool for tests/integration/test_remote_soundness.py: rewrites the plain texts that a remote
// result holds (the manifest, nvfresh.entry) as an attacker who can write the ActionCache would,
// every checksum recomputed (issue 41, R2 and R3). Usage:
//   remote_entry_tool relink <manifest> <out> <from hex32> <to hex32>
//       every entry of the manifest that names the result key <from> names <to> instead;
//       exit 1 when none does
//   remote_entry_tool forge <entry> <object> <out>
//       the entry line for line, but its object digest that of the file <object>
#include "cache/cache_entry.hpp"
#include "cache/manifest.hpp"
#include "util/file_io.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

namespace {

std::string read_or_exit(const std::string& file)
{
  auto text = nvfresh::try_read_file(file, 1ULL << 32);
  if (!text) {
    fmt::print(stderr, "remote_entry_tool: cannot read {}\n", file);
    std::exit(2);
  }
  return *text;
}

nvfresh::Digest digest_or_exit(const std::string& hex)
{
  auto digest = nvfresh::Digest::from_hex(hex);
  if (!digest) {
    fmt::print(stderr, "remote_entry_tool: {} is not a digest\n", hex);
    std::exit(2);
  }
  return *digest;
}

int relink(const std::string& in, const std::string& out, const std::string& from,
           const std::string& to)
{
  std::string error;
  auto manifest = nvfresh::parse_manifest(read_or_exit(in), &error);
  if (!manifest) {
    fmt::print(stderr, "remote_entry_tool: {}: {}\n", in, error);
    return 2;
  }
  const nvfresh::Digest old_key = digest_or_exit(from);
  int relinked = 0;
  for (auto& entry : manifest->entries) {
    if (entry.result == old_key) {
      entry.result = digest_or_exit(to);
      ++relinked;
    }
  }
  nvfresh::write_file_atomically(out, nvfresh::serialize_manifest(*manifest));
  return relinked > 0 ? 0 : 1;
}

int forge(const std::string& in, const std::string& object, const std::string& out)
{
  std::string error;
  auto entry = nvfresh::parse_cache_entry(read_or_exit(in), &error);
  if (!entry) {
    fmt::print(stderr, "remote_entry_tool: {}: {}\n", in, error);
    return 2;
  }
  entry->object_digest = nvfresh::hash_bytes(read_or_exit(object));
  nvfresh::write_file_atomically(out, nvfresh::serialize_cache_entry(*entry));
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  const std::string verb = argc > 1 ? argv[1] : "";
  if (verb == "relink" && argc == 6) {
    return relink(argv[2], argv[3], argv[4], argv[5]);
  }
  if (verb == "forge" && argc == 5) {
    return forge(argv[2], argv[3], argv[4]);
  }
  fmt::print(stderr, "usage: remote_entry_tool relink <manifest> <out> <from> <to>\n"
                     "       remote_entry_tool forge <entry> <object> <out>\n");
  return 2;
}
