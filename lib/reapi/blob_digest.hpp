// SHA-256 digests as REAPI names blobs (build.bazel.remote.execution.v2.Digest: the lowercase hex
// hash and the size). REAPI has no XXH3: nvfresh keeps XXH3-128 for its local key and computes
// SHA-256 only for what it shares with a remote cache (OpenSSL's libcrypto).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nvfresh::reapi {

struct BlobDigest {
  std::string hash;  // 64 lowercase hex digits
  std::int64_t size = 0;
  bool operator==(const BlobDigest&) const = default;
  auto operator<=>(const BlobDigest&) const = default;
};

BlobDigest digest_of(std::string_view bytes);

// The digest of a file's content. Throws std::runtime_error when it cannot be read.
BlobDigest digest_of_file(const std::string& path);

}  // namespace nvfresh::reapi
