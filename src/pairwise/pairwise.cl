// OpenCL pairwise kernels, C[x] = Σ_y term(A[x], B[y]); the same variants and ideas
// as the CUDA kernels (pairwise_kernels.cuh), one kernel each:
//   pairwise_naive       one x per work-item, B from global memory
//   pairwise_local       B in tiles of one value per work-item in local memory; every
//                        work-item reaches every barrier, the tail tile is shorter
//   pairwise_vec4/vec8   4 or 8 consecutive x per work-item, A and C moved with vload/vstore
//   pairwise_local_vec8  both
//   pairwise_fast        FAST_ITEMS x per work-item in registers (strided by the group size so
//                        accesses stay coalesced), B tiles read back from local memory as
//                        float4 broadcasts: one load feeds 4·FAST_ITEMS independent FMA chains;
//                        the gaussian evaluates 3 exp2 in 16 as an FMA polynomial so the
//                        special-function unit is not the only limit; when X gives too few
//                        groups, B is split into slices over a second dimension and either
//                        the last group of each column of groups adds the slices' partial
//                        results (one launch) or pairwise_sum_slices does (a second launch)
// Sums run over chunks of B whose partial sums add into a second accumulator (float32 accuracy
// at 2^16 terms). PAIRWISE_KERNEL picks the term: 0 product, 1 gaussian, exp2(−((a − b)·s)²)
// with s = sqrt(log2(e) / (2h²)), 2 PAIRWISE_EXPRESSION(a, b), which the host defines in front
// of this text.

#ifndef PAIRWISE_KERNEL
#define PAIRWISE_KERNEL 0
#endif
#ifndef FAST_ITEMS
#define FAST_ITEMS 8
#endif
#ifndef FAST_TILE
#define FAST_TILE 1024
#endif
#ifndef CHUNK
#define CHUNK 1024
#endif
#ifndef SUM_THREADS
#define SUM_THREADS 256
#endif

// 2^x for x ≤ 0 on the FMA pipe: x = n + f, n = round(x), f in [−0.5, 0.5]; a degree-4
// polynomial gives 2^f within 3e-6 relative and n goes into the exponent field. x is clamped
// at −125 so the exponent stays normal (2^−125 ≈ 2.4e−38 stands for 0).
inline float exp2_poly(float x) {
  x = fmax(x, -125.0f);
  float shifted = x + 12582912.0f;  // 1.5·2^23: the low mantissa bits now hold round(x)
  float n = shifted - 12582912.0f;
  float f = x - n;
  float p = fma(0.009560510516166687f, f, 0.05591703951358795f);
  p = fma(p, f, 0.24024981260299683f);
  p = fma(p, f, 0.6931219696998596f);
  p = fma(p, f, 0.9999991655349731f);
  return as_float(as_int(p) + (as_int(shifted) << 23));
}

#if PAIRWISE_KERNEL == 1
// 2^x on the special-function unit; with PTX_EXP2 (NVIDIA only) exactly the one instruction.
inline float exp2_sfu(float x) {
#ifdef PTX_EXP2
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return native_exp2(x);
#endif
}
// The difference first, then the scale: scaling a and b first would round each of them to
// about |a|·s·2^-24 and lose the low bits of their difference when h is small.
inline float term(float a, float b, float s) {
  float d = (a - b) * s;
  return exp2_sfu(-d * d);
}
// 3 exp2 in 16 as the polynomial (the last term of items k with k mod 4 < 3), the rest on the
// special-function unit: the balance of issue slots and SFU cycles on NVIDIA GPUs (see
// GaussianTerm in pairwise_kernels.cuh).
inline float term4(float acc, float a, float4 b, float s, int item) {
  float dx = (a - b.x) * s, dy = (a - b.y) * s, dz = (a - b.z) * s, dw = (a - b.w) * s;
  acc += exp2_sfu(-dx * dx);
  acc += exp2_sfu(-dy * dy);
  acc += exp2_sfu(-dz * dz);
  return acc + (item % 4 < 3 ? exp2_poly(-dw * dw) : exp2_sfu(-dw * dw));
}
#else
#if PAIRWISE_KERNEL == 2
inline float term(float a, float b, float s) {
  return (float)(PAIRWISE_EXPRESSION(a, b));
}
#else
inline float term(float a, float b, float s) {
  return a * b;
}
#endif
inline float term4(float acc, float a, float4 b, float s, int item) {
#if PAIRWISE_KERNEL == 0
  acc = fma(a, b.x, acc);
  acc = fma(a, b.y, acc);
  acc = fma(a, b.z, acc);
  return fma(a, b.w, acc);
#else
  acc += term(a, b.x, s);
  acc += term(a, b.y, s);
  acc += term(a, b.z, s);
  return acc + term(a, b.w, s);
#endif
}
#endif

__kernel void pairwise_naive(__global const float* restrict A, __global const float* restrict B,
                             __global float* restrict C, long X, long Y, float s) {
  long x = get_global_id(0);
  if (x >= X) return;
  float a = A[x];
  float total = 0.0f;
  for (long y0 = 0; y0 < Y; y0 += CHUNK) {
    long end = min(y0 + CHUNK, Y);
    float part = 0.0f;
    for (long y = y0; y < end; ++y)
      part += term(a, B[y], s);
    total += part;
  }
  C[x] = total;
}

__kernel void pairwise_local(__global const float* restrict A, __global const float* restrict B,
                             __global float* restrict C, long X, long Y, float s,
                             __local float* tile) {
  const int lid = get_local_id(0), group = get_local_size(0);
  long x = get_global_id(0);
  float a = A[min(x, X - 1)];
  float total = 0.0f;
  for (long t0 = 0; t0 < Y; t0 += group) {
    int n = (int)min((long)group, Y - t0);
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile has been read by everyone
    if (lid < n) tile[lid] = B[t0 + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    float part = 0.0f;
    for (int j = 0; j < n; ++j)
      part += term(a, tile[j], s);
    total += part;
  }
  if (x < X) C[x] = total;
}

// W consecutive x from x0: vloadW where the run is whole, else one at a time (missing x repeat
// the last one).
#define LOAD_RUN(W, a, x0)                  \
  if (x0 + W <= X) {                        \
    float##W v = vload##W(0, A + x0);       \
    for (int k = 0; k < W; ++k)             \
      a[k] = ((float*)&v)[k];       \
  } else {                                  \
    for (int k = 0; k < W; ++k)             \
      a[k] = A[min(x0 + k, X - 1)]; \
  }

#define STORE_RUN(W, c, x0)             \
  if (x0 + W <= X) {                    \
    float##W v;                         \
    for (int k = 0; k < W; ++k)         \
      ((float*)&v)[k] = c[k];           \
    vstore##W(v, 0, C + x0);            \
  } else {                              \
    for (int k = 0; k < W; ++k)         \
      if (x0 + k < X) C[x0 + k] = c[k]; \
  }

#define VEC_KERNEL(W)                                                                         \
  __kernel void pairwise_vec##W(__global const float* restrict A,                             \
                                __global const float* restrict B, __global float* restrict C, \
                                long X, long Y, float s) {                                    \
    long x0 = (long)get_global_id(0) * W;                                                     \
    if (x0 >= X) return;                                                                      \
    float a[W], total[W];                                                                     \
    LOAD_RUN(W, a, x0)                                                                        \
    for (int k = 0; k < W; ++k)                                                               \
      total[k] = 0.0f;                                                                        \
    for (long y0 = 0; y0 < Y; y0 += CHUNK) {                                                  \
      long end = min(y0 + CHUNK, Y);                                                          \
      float part[W];                                                                          \
      for (int k = 0; k < W; ++k)                                                             \
        part[k] = 0.0f;                                                                       \
      for (long y = y0; y < end; ++y) {                                                       \
        float b = B[y];                                                                       \
        for (int k = 0; k < W; ++k)                                                           \
          part[k] += term(a[k], b, s);                                                        \
      }                                                                                       \
      for (int k = 0; k < W; ++k)                                                             \
        total[k] += part[k];                                                                  \
    }                                                                                         \
    STORE_RUN(W, total, x0)                                                                   \
  }

VEC_KERNEL(4)
VEC_KERNEL(8)

__kernel void pairwise_local_vec8(__global const float* restrict A,
                                  __global const float* restrict B, __global float* restrict C,
                                  long X, long Y, float s, __local float* tile) {
  const int lid = get_local_id(0), group = get_local_size(0);
  long x0 = (long)get_global_id(0) * 8;
  long first = x0 < X ? x0 : 0;
  float a[8], total[8];
  LOAD_RUN(8, a, first)
  for (int k = 0; k < 8; ++k)
    total[k] = 0.0f;
  for (long t0 = 0; t0 < Y; t0 += group) {
    int n = (int)min((long)group, Y - t0);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < n) tile[lid] = B[t0 + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    float part[8];
    for (int k = 0; k < 8; ++k)
      part[k] = 0.0f;
    for (int j = 0; j < n; ++j) {
      float b = tile[j];
      for (int k = 0; k < 8; ++k)
        part[k] += term(a[k], b, s);
    }
    for (int k = 0; k < 8; ++k)
      total[k] += part[k];
  }
  if (x0 < X) {
    STORE_RUN(8, total, x0)
  }
}

// Adds the slices' partial results for the FAST_ITEMS x of this work-item into C, in slice
// order as pairwise_sum_slices does (the same bits either way). The partials were written by
// other groups of this launch, so they are read through a volatile pointer, from memory; the
// loads of COMBINE_ROWS slices (32 values per work-item: more would spill, and a spilled load
// waits for its value) are all issued before their sums so that they are in flight together.
#define COMBINE_ROWS (FAST_ITEMS >= 32 ? 1 : 32 / FAST_ITEMS)
void combine_slices(volatile __global const float* partial, uint rows, long X, long base,
                    int group, __global float* C) {
  float total[FAST_ITEMS];
#pragma unroll
  for (int k = 0; k < FAST_ITEMS; ++k)
    total[k] = 0.0f;
  for (uint r0 = 0; r0 < rows; r0 += COMBINE_ROWS) {
    float v[COMBINE_ROWS][FAST_ITEMS];
#pragma unroll
    for (int q = 0; q < COMBINE_ROWS; ++q)
#pragma unroll
      for (int k = 0; k < FAST_ITEMS; ++k) {
        long x = base + (long)k * group;
        v[q][k] = r0 + q < rows && x < X ? partial[(long)(r0 + q) * X + x] : 0.0f;
      }
#pragma unroll
    for (int q = 0; q < COMBINE_ROWS; ++q)
      if (r0 + q < rows) {
#pragma unroll
        for (int k = 0; k < FAST_ITEMS; ++k)
          total[k] += v[q][k];
      }
  }
#pragma unroll
  for (int k = 0; k < FAST_ITEMS; ++k) {
    long x = base + (long)k * group;
    if (x < X) C[x] = total[k];
  }
}

// Work-item l of group g owns x = g·size·FAST_ITEMS + l + k·size, k < FAST_ITEMS.
// Group row r (second dimension) sums slice r of B (y_slice values from r·y_slice) into C when
// there is one row, else into row r of `partial` (X floats each). With `combine` set, each group
// then takes a ticket of its column (tickets[g], counted with atomic_inc after a global fence)
// and the last one adds the rows into C and resets the ticket for the next launch; otherwise
// pairwise_sum_slices adds them in a second launch.
__kernel void pairwise_fast(__global const float* restrict A, __global const float* restrict B,
                            __global float* restrict C, long X, long Y, float s, long y_slice,
                            __global float* partial, int combine,
                            volatile __global uint* tickets) {
  __local float4 tile[FAST_TILE / 4];
  __local int is_last[1];  // an array: clang's uninitialised-use check warns on a scalar
  const long y_begin = (long)get_group_id(1) * y_slice;
  B += y_begin;  // a whole number of kSliceQuantum values: still 16-byte aligned
  Y = min(Y - y_begin, y_slice);
  __global float* out = get_num_groups(1) == 1 ? C : partial + (long)get_group_id(1) * X;
  const int lid = get_local_id(0), group = get_local_size(0);
  const long base = (long)get_group_id(0) * group * FAST_ITEMS + lid;
  float a[FAST_ITEMS], total[FAST_ITEMS];
#pragma unroll
  for (int k = 0; k < FAST_ITEMS; ++k) {
    a[k] = A[min(base + (long)k * group, X - 1)];
    total[k] = 0.0f;
  }
  const long full_tiles = Y / FAST_TILE;
  for (long t = 0; t < full_tiles; ++t) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < FAST_TILE / 4; i += group) {
      float4 q = vload4(t * (FAST_TILE / 4) + i, B);
      tile[i] = (float4)(q.x, q.y, q.z, q.w);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float part[FAST_ITEMS];
#pragma unroll
    for (int k = 0; k < FAST_ITEMS; ++k)
      part[k] = 0.0f;
      // Products unroll further: 8 loads and 256 FMAs between loop branches.
#if PAIRWISE_KERNEL == 0
#pragma unroll 8
#else
#pragma unroll 4
#endif
    for (int j = 0; j < FAST_TILE / 4; ++j) {
      float4 b = tile[j];
#pragma unroll
      for (int k = 0; k < FAST_ITEMS; ++k)
        part[k] = term4(part[k], a[k], b, s, k);
    }
#pragma unroll
    for (int k = 0; k < FAST_ITEMS; ++k)
      total[k] += part[k];
  }
  // The last tile of a slice (or of B): its whole float4s as in a full tile, then up to 3
  // values one by one.
  const long t0 = full_tiles * FAST_TILE;
  if (t0 < Y) {
    const int n = (int)(Y - t0), quads = n / 4;
    __local float* tail = (__local float*)tile;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < quads; i += group) {
      float4 q = vload4(t0 / 4 + i, B);
      tile[i] = (float4)(q.x, q.y, q.z, q.w);
    }
    for (int i = quads * 4 + lid; i < n; i += group)
      tail[i] = B[t0 + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    float part[FAST_ITEMS];
#pragma unroll
    for (int k = 0; k < FAST_ITEMS; ++k)
      part[k] = 0.0f;
    // No unroll pragma: the trip count is known only here, and PoCL 5 warns on stderr that it
    // cannot unroll this loop after its work-group transformations.
    for (int j = 0; j < quads; ++j) {
      float4 b = tile[j];
#pragma unroll
      for (int k = 0; k < FAST_ITEMS; ++k)
        part[k] = term4(part[k], a[k], b, s, k);
    }
    for (int j = quads * 4; j < n; ++j) {
      float b = tail[j];
#pragma unroll
      for (int k = 0; k < FAST_ITEMS; ++k)
        part[k] += term(a[k], b, s);
    }
#pragma unroll
    for (int k = 0; k < FAST_ITEMS; ++k)
      total[k] += part[k];
  }
#pragma unroll
  for (int k = 0; k < FAST_ITEMS; ++k) {
    long x = base + (long)k * group;
    if (x < X) out[x] = total[k];
  }
  const uint rows = get_num_groups(1);
  if (rows == 1 || !combine) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);  // this row's partials before the ticket
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) is_last[0] = atomic_inc(tickets + get_group_id(0)) == rows - 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last[0]) return;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  combine_slices(partial, rows, X, base, group, C);
  if (lid == 0) tickets[get_group_id(0)] = 0;
}

// C[x] = the sum of the slices' partial results for x, in slice order.
__kernel void pairwise_sum_slices(__global const float* restrict partial, int slices, long X,
                                  __global float* restrict C) {
  long x = get_global_id(0);
  if (x >= X) return;
  float total = 0.0f;
  for (int s = 0; s < slices; ++s)
    total += partial[(long)s * X + x];
  C[x] = total;
}

// The product shortcut without a reduce on this device: one group of SUM_THREADS sums B
// (chunked partial sums, then a tree in local memory) into sum[0].
__kernel void pairwise_sum_b(__global const float* restrict B, long Y, __global float* sum) {
  __local float partial[SUM_THREADS];
  const int lid = get_local_id(0);
  float total = 0.0f;
  for (long y0 = (long)lid * CHUNK; y0 < Y; y0 += (long)SUM_THREADS * CHUNK) {
    long end = min(y0 + CHUNK, Y);
    float part = 0.0f;
    for (long y = y0; y < end; ++y)
      part += B[y];
    total += part;
  }
  partial[lid] = total;
  for (int stride = SUM_THREADS / 2; stride > 0; stride /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < stride) partial[lid] += partial[lid + stride];
  }
  if (lid == 0) sum[0] = partial[0];
}

// C = A · sum[0]: the second half of the product shortcut.
__kernel void pairwise_scale(__global const float* restrict A, __global const float* restrict sum,
                             __global float* restrict C, long X) {
  long x = get_global_id(0);
  if (x < X) C[x] = A[x] * sum[0];
}

// The product shortcut in one launch, for a short B: every group sums all of B itself (work-item
// l adds B[l], B[l + SUM_THREADS], … in order, then a tree in local memory: the same order, so the
// same bits, in every group), then scales its share of A, striding over the groups. A short B
// is read from L2 by every group at less cost than a second launch.
__kernel void pairwise_scale_by_group_sum(__global const float* restrict A,
                                          __global const float* restrict B,
                                          __global float* restrict C, long X, long Y) {
  __local float partial[SUM_THREADS];
  const int lid = get_local_id(0);
  float total = 0.0f;
  for (long y = lid; y < Y; y += SUM_THREADS)
    total += B[y];
  partial[lid] = total;
  for (int stride = SUM_THREADS / 2; stride > 0; stride /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < stride) partial[lid] += partial[lid + stride];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const float sum = partial[0];
  for (long x = get_global_id(0); x < X; x += get_global_size(0))
    C[x] = A[x] * sum;
}
