#include "kernels.h"

#include <cstdio>

int main()
{
  std::printf("tiles for 1000 elements: %d, scale %.2f\n", attention_tiles(1000), scale_factor());
  return 0;
}
