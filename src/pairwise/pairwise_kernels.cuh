// CUDA pairwise kernels, C[x] = Σ_y term(A[x], B[y]), templated over the term F so
// that nvcc instantiates the built-in kernels and NVRTC the user's expression from this same
// text (it is embedded as a string, so it includes nothing and uses only built-ins).
//
// F provides term(a, b) (the gaussian's is exp2(−((a − b)·s)²)) and fast_term4, four terms at
// once for one of a thread's x (item k of its kItems). Every sum runs in float over chunks of B and
// adds each chunk's partial sum into a second accumulator, so 2^16 terms keep float32 accuracy.
//
// Variants, each one idea on top of the textbook kernel:
//   naive       one x per thread, B read from global memory (through the read-only cache)
//   local       B in tiles of blockDim.x values in shared memory; all threads reach every
//               barrier, the tail tile is shorter
//   vec4, vec8  4 or 8 consecutive x per thread, A and C moved as float4 where the run is whole
//   local_vec8  both
//   fast        kItems (8 or 16) x per thread in registers, strided by blockDim.x so loads and
//   stores
//               stay coalesced; B in tiles of kFastTile values, read back from shared memory as
//               float4 broadcasts, so one 16-byte load feeds 4·kItems independent FMA
//               chains. F::fast_term4 may evaluate part of the four terms without the
//               special-function unit (the gaussian does 3 exp2 in 16 as a polynomial).
//               When X gives too few blocks to fill the device, B is split into slices over a
//               second grid dimension, and the last block of each column of blocks (or, in
//               a second launch, pairwise_sum_slices) adds the partial results in order.

#define PAIRWISE_CHUNK 1024

constexpr int kFastItems = 8;
constexpr int kFastTile = 1024;
constexpr int kSumThreads = 1024;

// 2^x with the special-function unit: flushes results below 2^-126 to zero.
__device__ __forceinline__ float pairwise_exp2_sfu(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// 2^x for x ≤ 0 on the FMA pipe: x = n + f with n = round(x), f in [−0.5, 0.5]; a degree-4
// polynomial gives 2^f within 3e-6 relative, and n goes straight into the exponent field.
// x is clamped at −125 so that the exponent stays normal (2^−125 ≈ 2.4e−38 stands for 0).
__device__ __forceinline__ float pairwise_exp2_poly(float x) {
  x = fmaxf(x, -125.0f);
  float shifted = x + 12582912.0f;  // 1.5·2^23: the low mantissa bits now hold round(x)
  float n = shifted - 12582912.0f;
  float f = x - n;
  float p = fmaf(0.009560510516166687f, f, 0.05591703951358795f);
  p = fmaf(p, f, 0.24024981260299683f);
  p = fmaf(p, f, 0.6931219696998596f);
  p = fmaf(p, f, 0.9999991655349731f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(shifted) << 23));
}

struct ProductTerm {
  static constexpr int kFastUnroll = 8;  // 256 FMAs and 8 loads between loop branches
  __device__ __forceinline__ float term(float a, float b) const { return a * b; }
  __device__ __forceinline__ float fast_term4(float acc, float a, float4 b, int) const {
    acc = fmaf(a, b.x, acc);
    acc = fmaf(a, b.y, acc);
    acc = fmaf(a, b.z, acc);
    return fmaf(a, b.w, acc);
  }
};

struct GaussianTerm {
  static constexpr int kFastUnroll = 4;
  float s;  // sqrt(log2(e) / (2h²))
  // The difference first, then the scale: scaling a and b first would round each of them to
  // about |a|·s·2^-24 and lose the low bits of their difference when h is small.
  __device__ __forceinline__ float term(float a, float b) const {
    float d = (a - b) * s;
    return pairwise_exp2_sfu(-d * d);
  }
  // Most exponentials on the special-function unit, 3 in 16 as a polynomial on the FMA pipe
  // (the last term of items k with k mod 4 < 3). Per four terms a warp issues 5 instructions
  // for an SFU term and 14 for a polynomial one, and an SM sub-partition's SFU takes 8 cycles
  // per warp instruction: one polynomial in four makes issue the bound (29 cycles against
  // the SFU's 24), 3 in 16 balances the two (26.75 against 26).
  __device__ __forceinline__ float fast_term4(float acc, float a, float4 b, int item) const {
    float dx = (a - b.x) * s, dy = (a - b.y) * s, dz = (a - b.z) * s, dw = (a - b.w) * s;
    acc += pairwise_exp2_sfu(-dx * dx);
    acc += pairwise_exp2_sfu(-dy * dy);
    acc += pairwise_exp2_sfu(-dz * dz);
    return acc + (item % 4 < 3 ? pairwise_exp2_poly(-dw * dw) : pairwise_exp2_sfu(-dw * dw));
  }
};

// A run-time expression: NVRTC compiles this file after a definition of
// PAIRWISE_EXPRESSION(a, b).
#ifdef PAIRWISE_EXPRESSION
struct ExpressionTerm {
  static constexpr int kFastUnroll = 4;
  __device__ __forceinline__ float term(float a, float b) const {
    return (float)(PAIRWISE_EXPRESSION(a, b));
  }
  __device__ __forceinline__ float fast_term4(float acc, float a, float4 b, int) const {
    acc += term(a, b.x);
    acc += term(a, b.y);
    acc += term(a, b.z);
    return acc + term(a, b.w);
  }
};
#endif

template <class F>
__global__ void __launch_bounds__(1024)
    pairwise_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                   long long X, long long Y, F f) {
  long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= X) return;
  float a = A[x];
  float total = 0.0f;
  for (long long y0 = 0; y0 < Y; y0 += PAIRWISE_CHUNK) {
    long long end = y0 + PAIRWISE_CHUNK < Y ? y0 + PAIRWISE_CHUNK : Y;
    float part = 0.0f;
    for (long long y = y0; y < end; ++y)
      part += f.term(a, __ldg(B + y));
    total += part;
  }
  C[x] = total;
}

// One tile of blockDim.x values of B per round; threads past X still load and wait.
template <class F>
__global__ void __launch_bounds__(1024)
    pairwise_local(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                   long long X, long long Y, F f) {
  extern __shared__ float tile[];
  long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float a = A[x < X ? x : X - 1];
  float total = 0.0f;
  for (long long t0 = 0; t0 < Y; t0 += blockDim.x) {
    int n = Y - t0 < (long long)blockDim.x ? (int)(Y - t0) : (int)blockDim.x;
    __syncthreads();  // the previous tile has been read by everyone
    if ((int)threadIdx.x < n) tile[threadIdx.x] = B[t0 + threadIdx.x];
    __syncthreads();
    float part = 0.0f;
    for (int j = 0; j < n; ++j)
      part += f.term(a, tile[j]);
    total += part;
  }
  if (x < X) C[x] = total;
}

// Loads the W values of A from x0 (missing ones past X repeat the last) as float4 where the run
// is whole and 16-byte aligned.
template <int W, class F>
__device__ __forceinline__ void pairwise_load_run(const float* A, long long x0, long long X, F f,
                                                  float (&a)[W]) {
  if (x0 + W <= X && ((unsigned long long)(A + x0) & 15) == 0) {
#pragma unroll
    for (int v = 0; v < W / 4; ++v) {
      float4 q = reinterpret_cast<const float4*>(A + x0)[v];
      a[4 * v] = q.x;
      a[4 * v + 1] = q.y;
      a[4 * v + 2] = q.z;
      a[4 * v + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k)
      a[k] = A[x0 + k < X ? x0 + k : X - 1];
  }
#pragma unroll
  for (int k = 0; k < W; ++k)
    a[k] = a[k];
}

template <int W>
__device__ __forceinline__ void pairwise_store_run(float* C, long long x0, long long X,
                                                   const float (&c)[W]) {
  if (x0 + W <= X && ((unsigned long long)(C + x0) & 15) == 0) {
#pragma unroll
    for (int v = 0; v < W / 4; ++v)
      reinterpret_cast<float4*>(C + x0)[v] =
          make_float4(c[4 * v], c[4 * v + 1], c[4 * v + 2], c[4 * v + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (x0 + k < X) C[x0 + k] = c[k];
  }
}

template <int W, class F>
__device__ __forceinline__ void pairwise_vec_body(const float* __restrict__ A,
                                                  const float* __restrict__ B,
                                                  float* __restrict__ C, long long X, long long Y,
                                                  F f) {
  long long x0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * W;
  if (x0 >= X) return;
  float a[W], total[W];
  pairwise_load_run<W>(A, x0, X, f, a);
#pragma unroll
  for (int k = 0; k < W; ++k)
    total[k] = 0.0f;
  for (long long y0 = 0; y0 < Y; y0 += PAIRWISE_CHUNK) {
    long long end = y0 + PAIRWISE_CHUNK < Y ? y0 + PAIRWISE_CHUNK : Y;
    float part[W];
#pragma unroll
    for (int k = 0; k < W; ++k)
      part[k] = 0.0f;
    for (long long y = y0; y < end; ++y) {
      float b = __ldg(B + y);
#pragma unroll
      for (int k = 0; k < W; ++k)
        part[k] += f.term(a[k], b);
    }
#pragma unroll
    for (int k = 0; k < W; ++k)
      total[k] += part[k];
  }
  pairwise_store_run<W>(C, x0, X, total);
}

template <class F>
__global__ void __launch_bounds__(1024)
    pairwise_vec4(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  long long X, long long Y, F f) {
  pairwise_vec_body<4>(A, B, C, X, Y, f);
}

template <class F>
__global__ void __launch_bounds__(1024)
    pairwise_vec8(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  long long X, long long Y, F f) {
  pairwise_vec_body<8>(A, B, C, X, Y, f);
}

template <class F>
__global__ void __launch_bounds__(1024)
    pairwise_local_vec8(const float* __restrict__ A, const float* __restrict__ B,
                        float* __restrict__ C, long long X, long long Y, F f) {
  extern __shared__ float tile[];
  long long x0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 8;
  float a[8], total[8];
  pairwise_load_run<8>(A, x0 < X ? x0 : 0, X, f, a);
#pragma unroll
  for (int k = 0; k < 8; ++k)
    total[k] = 0.0f;
  for (long long t0 = 0; t0 < Y; t0 += blockDim.x) {
    int n = Y - t0 < (long long)blockDim.x ? (int)(Y - t0) : (int)blockDim.x;
    __syncthreads();
    if ((int)threadIdx.x < n) tile[threadIdx.x] = B[t0 + threadIdx.x];
    __syncthreads();
    float part[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
      part[k] = 0.0f;
    for (int j = 0; j < n; ++j) {
      float b = tile[j];
#pragma unroll
      for (int k = 0; k < 8; ++k)
        part[k] += f.term(a[k], b);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k)
      total[k] += part[k];
  }
  if (x0 < X) pairwise_store_run<8>(C, x0, X, total);
}

// Thread t of block g owns x = g·blockDim.x·kItems + t + k·blockDim.x, k < kItems. 16 x per
// thread need more than the 64 registers a block of 1024 leaves each thread: blocks of at most
// 512 then.
// Adds the slices' partial results for the kItems x of this thread into C, in slice order as
// pairwise_sum_slices does (the same bits either way). Other blocks of this launch wrote them,
// so they are read from L2 (__ldcg); the loads of kRows slices (32 values per thread: more
// spill registers, and a spilled load waits for its value) are all issued before their sums so
// that they are in flight together.
template <int kItems>
__device__ void pairwise_combine_slices(const float* partial, unsigned rows, long long X,
                                        long long base, float* C) {
  constexpr int kCombineRows = kItems >= 32 ? 1 : 32 / kItems;
  float total[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    total[k] = 0.0f;
  for (unsigned r0 = 0; r0 < rows; r0 += kCombineRows) {
    float v[kCombineRows][kItems];
#pragma unroll
    for (int q = 0; q < kCombineRows; ++q)
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        long long x = base + (long long)k * blockDim.x;
        v[q][k] = r0 + q < rows && x < X ? __ldcg(partial + (long long)(r0 + q) * X + x) : 0.0f;
      }
#pragma unroll
    for (int q = 0; q < kCombineRows; ++q)
      if (r0 + q < rows) {
#pragma unroll
        for (int k = 0; k < kItems; ++k)
          total[k] += v[q][k];
      }
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    long long x = base + (long long)k * blockDim.x;
    if (x < X) C[x] = total[k];
  }
}

// Grid row r sums slice r of B (y_slice values from r·y_slice) into C when the grid has one
// row, else into row r of `partial` (X floats each). With `tickets`, each block then takes a
// ticket of its column (tickets[blockIdx.x], after a fence) and the last one adds the rows into
// C and resets the ticket for the next launch; without, pairwise_sum_slices adds them in a
// second launch.
template <class F, int kItems = kFastItems>
__global__ void __launch_bounds__(kItems > 8 ? 512 : 1024)
    pairwise_fast(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  long long X, long long Y, F f, long long y_slice, float* partial,
                  unsigned* tickets) {
  __shared__ float4 tile[kFastTile / 4];
  __shared__ bool is_last;
  const long long y_begin = (long long)blockIdx.y * y_slice;
  B += y_begin;  // a whole number of kSliceQuantum values: still 16-byte aligned
  Y = Y - y_begin < y_slice ? Y - y_begin : y_slice;
  float* out = gridDim.y == 1 ? C : partial + (long long)blockIdx.y * X;
  const long long base = (long long)blockIdx.x * blockDim.x * kItems + threadIdx.x;
  float a[kItems], total[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    long long x = base + (long long)k * blockDim.x;
    a[k] = A[x < X ? x : X - 1];
    total[k] = 0.0f;
  }
  // B is 16-byte aligned (device allocations are), and full tiles start at multiples of 4.
  const float4* B4 = reinterpret_cast<const float4*>(B);
  const long long full_tiles = Y / kFastTile;
  for (long long t = 0; t < full_tiles; ++t) {
    __syncthreads();
    for (int i = threadIdx.x; i < kFastTile / 4; i += blockDim.x) {
      float4 q = B4[t * (kFastTile / 4) + i];
      tile[i] = make_float4(q.x, q.y, q.z, q.w);
    }
    __syncthreads();
    float part[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      part[k] = 0.0f;
#pragma unroll(F::kFastUnroll)
    for (int j = 0; j < kFastTile / 4; ++j) {
      float4 b = tile[j];
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        part[k] = f.fast_term4(part[k], a[k], b, k);
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      total[k] += part[k];
  }
  // The last tile of a slice (or of B): its whole float4s as in a full tile, then up to 3
  // values one by one.
  const long long t0 = full_tiles * kFastTile;
  if (t0 < Y) {
    const int n = (int)(Y - t0), quads = n / 4;
    float* tail = reinterpret_cast<float*>(tile);
    __syncthreads();
    for (int i = threadIdx.x; i < quads; i += blockDim.x) {
      float4 q = B4[t0 / 4 + i];
      tile[i] = make_float4(q.x, q.y, q.z, q.w);
    }
    for (int i = quads * 4 + threadIdx.x; i < n; i += blockDim.x)
      tail[i] = B[t0 + i];
    __syncthreads();
    float part[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      part[k] = 0.0f;
#pragma unroll 4
    for (int j = 0; j < quads; ++j) {
      float4 b = tile[j];
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        part[k] = f.fast_term4(part[k], a[k], b, k);
    }
    for (int j = quads * 4; j < n; ++j) {
      float b = tail[j];
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        part[k] += f.term(a[k], b);
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      total[k] += part[k];
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    long long x = base + (long long)k * blockDim.x;
    if (x < X) out[x] = total[k];
  }
  if (gridDim.y == 1 || tickets == nullptr) return;
  __threadfence();  // this row's partials before the ticket
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(tickets + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  pairwise_combine_slices<kItems>(partial, gridDim.y, X, base, C);
  if (threadIdx.x == 0) tickets[blockIdx.x] = 0;
}

// C[x] = the sum of the slices' partial results for x, in slice order.
__global__ void pairwise_sum_slices(const float* __restrict__ partial, int slices, long long X,
                                    float* __restrict__ C) {
  long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= X) return;
  float total = 0.0f;
  for (int s = 0; s < slices; ++s)
    total += partial[(long long)s * X + x];
  C[x] = total;
}

// The product shortcut when the backend has no reduce: one block sums B (chunked partial sums,
// then a tree in shared memory) into sum[0].
__global__ void __launch_bounds__(kSumThreads)
    pairwise_sum_b(const float* __restrict__ B, long long Y, float* __restrict__ sum) {
  __shared__ float partial[kSumThreads];
  float total = 0.0f;
  for (long long y0 = (long long)threadIdx.x * PAIRWISE_CHUNK; y0 < Y;
       y0 += (long long)kSumThreads * PAIRWISE_CHUNK) {
    long long end = y0 + PAIRWISE_CHUNK < Y ? y0 + PAIRWISE_CHUNK : Y;
    float part = 0.0f;
    for (long long y = y0; y < end; ++y)
      part += B[y];
    total += part;
  }
  partial[threadIdx.x] = total;
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
  }
  if (threadIdx.x == 0) sum[0] = partial[0];
}

// The product shortcut in one launch, for a short B: every block sums all of B itself (thread t
// adds B[t], B[t + kGroupSumThreads], … in order, then a tree in shared memory: the same order,
// so the same bits, in every block), then scales its share of A, striding over the blocks. A
// short B is read from L2 by every block at less cost than a second launch.
constexpr int kGroupSumThreads = 256;

__global__ void __launch_bounds__(kGroupSumThreads)
    pairwise_scale_by_group_sum(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, long long X, long long Y) {
  __shared__ float partial[kGroupSumThreads];
  float total = 0.0f;
  for (long long y = threadIdx.x; y < Y; y += kGroupSumThreads)
    total += B[y];
  partial[threadIdx.x] = total;
  for (int half = kGroupSumThreads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
  }
  __syncthreads();
  const float sum = partial[0];
  for (long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x; x < X;
       x += (long long)gridDim.x * blockDim.x)
    C[x] = A[x] * sum;
}

// C = A · sum[0]: the second half of the product shortcut.
__global__ void pairwise_scale(const float* __restrict__ A, const float* __restrict__ sum,
                               float* __restrict__ C, long long X) {
  long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x < X) C[x] = A[x] * sum[0];
}
