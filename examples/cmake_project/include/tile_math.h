#pragma once

__host__ __device__ inline int tiles_for(int n, int tile)
{
  return (n + tile - 1) / tile;
}
