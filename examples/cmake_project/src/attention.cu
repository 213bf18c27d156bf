#include "kernel_config.h"
#include "kernels.h"

__global__ void attention_kernel(float* out, int n)
{
  int i = blockIdx.x * kTileSize + threadIdx.x;
  if (i < n) {
    out[i] = out[i] * 2.0f + static_cast<float>(kTileSize);
  }
}

int attention_tiles(int n)
{
  return tiles_for(n, kTileSize);
}
