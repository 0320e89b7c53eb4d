// OpenCL probes, the same as on CUDA: a streaming read of 16-byte vectors folded with XOR,
// eight independent FMA chains per work-item, and an empty kernel whose launches time the floor
// under every short case.
__kernel void read_probe(__global const uint4* in, ulong n, __global uint* out) {
  size_t stride = get_global_size(0);
  uint acc = 0;
  for (size_t i = get_global_id(0); i < n; i += stride) {
    uint4 a = in[i];
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9e3779b9u) out[0] = acc;
}

#define FMA_CHAINS 8
__kernel void fma_probe(__global float* out, float a, float b, int iters) {
  float acc[FMA_CHAINS];
  for (int j = 0; j < FMA_CHAINS; ++j)
    acc[j] = get_local_id(0) + j;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
      acc[j] = fma(acc[j], a, b);
  }
  float s = 0;
  for (int j = 0; j < FMA_CHAINS; ++j)
    s += acc[j];
  if (s == 1.2345f) out[0] = s;
}

__kernel void empty_probe(void) {}
