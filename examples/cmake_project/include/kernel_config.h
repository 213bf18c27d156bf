// Tile configuration shared by the kernels (the "kernel_forward.h" of this example).
#pragma once
#include "tile_math.h"

constexpr int kTileSize = 64;
