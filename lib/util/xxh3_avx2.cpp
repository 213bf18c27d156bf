// Compiled with -mavx2 (lib/CMakeLists.txt) on x86-64. It includes nothing but xxhash.h, whose
// inline implementation (XXH_INLINE_ALL) is all static functions: no inline function of a shared
// header is emitted here with AVX2 code that the linker could pick for the whole program.
#include "util/xxh3_avx2.hpp"

#if defined(__x86_64__) && defined(__AVX2__)

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace nvfresh::xxh3_avx2 {

Hash128 hash(const void* data, std::size_t size)
{
  const XXH128_hash_t value = XXH3_128bits(data, size);
  return {value.low64, value.high64};
}

void* new_state()
{
  XXH3_state_t* state = XXH3_createState();
  if (state != nullptr) {
    XXH3_128bits_reset(state);
  }
  return state;
}

void delete_state(void* state)
{
  XXH3_freeState(static_cast<XXH3_state_t*>(state));
}

void update(void* state, const void* data, std::size_t size)
{
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state), data, size);
}

Hash128 digest(const void* state)
{
  const XXH128_hash_t value = XXH3_128bits_digest(static_cast<const XXH3_state_t*>(state));
  return {value.low64, value.high64};
}

}  // namespace nvfresh::xxh3_avx2

#endif
