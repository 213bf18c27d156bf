// Two kernels and a device function that is not inlined (a .func with a return value), for the
// PTX unit tests (tests/unit/data/ptx/README.md).
__device__ __noinline__ float blend(float a, float b, float t) { return a + (b - a) * t; }

__global__ void add_one(int* p) { p[threadIdx.x] += 1; }

__global__ void __launch_bounds__(128) lerp_rows(const float* a, const float* b, float* out, float t, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = blend(a[i], b[i], t);
  }
}
