// nvfresh_heap_noise: an LD_PRELOAD library that `nvfresh repro` loads into every process of a
// compile (nvcc, cicc, ptxas, ...) to give each run a different heap layout. A compiler whose
// output depends on where its objects landed in memory (pointer-keyed maps iterated in address
// order: the libNVVM non-determinism) then shows it.
//
// Before main(), a constructor seeded by NVFRESH_HEAP_NOISE (a decimal seed; absent or 0: nothing
// happens) makes a few hundred allocations of random sizes, frees about half of them in random
// order and keeps the rest. The allocator's bins, free lists and top chunk then differ from run to
// run, so later allocations land at other places relative to each other. The kept blocks (at most
// about 1 MiB) are never freed: they are part of the noise. Nothing is interposed; the process
// runs unchanged otherwise.
//
// The seed is mixed with the process id, so that the processes of one compile differ from each
// other as well.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { k_max_blocks = 512, k_max_small = 2048, k_max_large = 64 * 1024 };

static uint64_t g_state;

// xorshift64*: enough randomness for layout noise, no allocation, no libc state touched.
static uint64_t next_random(void)
{
  g_state ^= g_state >> 12;
  g_state ^= g_state << 25;
  g_state ^= g_state >> 27;
  return g_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t parse_seed(const char* text)
{
  uint64_t value = 0;
  for (; text != NULL && *text >= '0' && *text <= '9'; ++text) {
    value = value * 10 + (uint64_t)(*text - '0');
  }
  return value;
}

static size_t noise_size(void)
{
  // Mostly small blocks (the sizes compilers allocate most), now and then a larger one.
  if (next_random() % 16 == 0) {
    return (size_t)(next_random() % k_max_large) + 1;
  }
  return (size_t)(next_random() % k_max_small) + 1;
}

__attribute__((constructor)) static void make_heap_noise(void)
{
  uint64_t seed = parse_seed(getenv("NVFRESH_HEAP_NOISE"));
  if (seed == 0) {
    return;
  }
  g_state = (seed * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)getpid() << 17) ^ 0xD1B54A32D192ED03ULL;
  if (g_state == 0) {
    g_state = 1;
  }
  static void* blocks[k_max_blocks];
  size_t count = 64 + (size_t)(next_random() % (k_max_blocks - 64));
  for (size_t i = 0; i < count; ++i) {
    blocks[i] = malloc(noise_size());
    if (blocks[i] != NULL) {
      memset(blocks[i], 0xA5, 1);  // touch it, so that it is really handed out
    }
  }
  for (size_t i = count; i > 1; --i) {  // free about half, in a shuffled order
    size_t j = (size_t)(next_random() % i);
    void* swap = blocks[i - 1];
    blocks[i - 1] = blocks[j];
    blocks[j] = swap;
  }
  for (size_t i = 0; i < count / 2; ++i) {
    free(blocks[i]);
    blocks[i] = NULL;
  }
}
