__global__ void add_one(int* p) { p[threadIdx.x] += 1; }
__global__ void scale(float* p, float s) { p[threadIdx.x] *= s; }
int host_fn(int x) { return x * 3; }
