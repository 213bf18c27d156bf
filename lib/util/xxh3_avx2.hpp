// XXH3-128 built for AVX2 (xxh3_avx2.cpp is compiled with -mavx2, from xxhash.h's inline
// implementation): the same hashes as the library's, since XXH3 does not depend on the vector
// width, in a quarter of the instructions per byte. Debian's libxxhash is built for SSE2, and its
// static archive (the launcher is one static executable) lacks the runtime dispatch its shared
// library has: hashing the 12 MB of a CUTLASS TU's touched headers was 12 M instructions.
// Call these only where hasher.cpp's CPU check says AVX2 is there; x86-64 only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvfresh::xxh3_avx2 {

struct Hash128 {
  std::uint64_t low;
  std::uint64_t high;
};

Hash128 hash(const void* data, std::size_t size);

// A streaming state (XXH3_state_t), reset on creation.
void* new_state();
void delete_state(void* state);
void update(void* state, const void* data, std::size_t size);
Hash128 digest(const void* state);

}  // namespace nvfresh::xxh3_avx2
