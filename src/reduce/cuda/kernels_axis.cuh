// CUDA reduce `fast` along an axis of a 2-D array. Rows (numpy axis=1) take a thread, a warp or
// a block per row by row length; columns (axis=0) give each thread a 16-byte strip of columns
// over a chunk of rows, and the last chunk of a column strip to finish folds the chunks in order.
// Every fold's order is fixed, so are the bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/order_key.cuh"
#include "cuda/ticket.cuh"
#include "cuda/vector_load.cuh"
#include "cuda/warp_reduce.cuh"
#include "reduce/cuda/fold.cuh"
#include "reduce/reduce_ops.hpp"

namespace parpat::detail {

// ---------------------------------------------------------------------------------------------
// fast, axis rows.

// Row r's element c is at in[r · stride + c · col_step] in each of these kernels.
template <class T, class Op>
__global__ void rows_by_thread(const T* in, std::int64_t rows, std::int64_t cols,
                               std::int64_t stride, std::int64_t col_step,
                               typename Op::Result* values, std::int64_t* indices) {
  std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  typename Op::Acc acc = Op::identity();
  for (std::int64_t c = 0; c < cols; ++c)
    acc = Op::append(acc, in[r * stride + c * col_step], c);
  write_result<Op>(acc, values, indices, r);
}

template <class T, class Op>
__global__ void rows_by_warp(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                             std::int64_t col_step, typename Op::Result* values,
                             std::int64_t* indices) {
  std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  if (r >= rows) return;  // whole warps leave together: rows are warp-uniform
  int lane = threadIdx.x % kWarp;
  typename Op::Acc acc =
      fold_stepped<Op>(Op::identity(), in + r * stride, col_step, lane, cols, kWarp, 0);
  acc = warp_reduce<Op>(acc);
  if (lane == 0) write_result<Op>(acc, values, indices, r);
}

// One block's fold of a row: thread t visits vectors t, t + kBlock, ... in order (kFastUnroll
// loads in flight), then the scalar tail; a row that is not 16-byte aligned, or whose elements
// are col_step apart, goes element by element (kFastUnroll scalar loads in flight).
template <class T, class Op, int kBlock, bool kVector>
__device__ __forceinline__ typename Op::Acc fold_row(const T* row, std::int64_t cols,
                                                     std::int64_t col_step) {
  constexpr int V = Vec16<T>::kCount;
  typename Op::Acc acc = Op::identity();
  if constexpr (kVector) {
    std::int64_t vectors = cols / V;
    std::int64_t v = threadIdx.x;
    acc = fold_batches<Op>(acc, row, v, vectors, kBlock, 0);
    for (; v < vectors; v += kBlock)
      acc = fold16<Op>(acc, load16(row + v * V), v * V);
    for (std::int64_t c = vectors * V + threadIdx.x; c < cols; c += kBlock)
      acc = Op::append(acc, row[c], c);
  } else {
    acc = fold_stepped<Op>(acc, row, col_step, threadIdx.x, cols, kBlock, 0);
  }
  return acc;
}

constexpr int kRowsBatch = 32;

// Rows longer than a warp's share: block b takes rows b, b + grid, ... (by default the grid is
// one block per row; a smaller, resident grid strides). Each warp reduces its share of a row with
// warp-wide operations and goes on to its next row's loads without waiting for the block's other
// warps; the warps' results wait in shared memory, and after every kRowsBatch rows (or the
// block's last) the block meets once and combines them, warps in order, one row per thread. One
// block barrier per row at most, where a block-wide tree needs two and a shared-memory round,
// keeps the warps' loads in flight (16384 rows of 16384 float32 on an H100: 382 µs with the
// tree, 345 µs so, CUB's segmented reduce 345 µs). The folds' order is fixed, so are the bits.
template <class T, class Op, int kBlock, bool kVector>
__global__ void __launch_bounds__(kBlock)
    rows_by_block(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                  std::int64_t col_step, typename Op::Result* values, std::int64_t* indices) {
  using Acc = typename Op::Acc;
  constexpr int kWarps = kBlock / kWarp;
  static_assert(kRowsBatch <= kBlock, "a batch's rows are combined one per thread");
  __shared__ Acc parts[kRowsBatch][kWarps];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const std::int64_t step = gridDim.x;
  for (std::int64_t first = blockIdx.x; first < rows; first += kRowsBatch * step) {
    const int count =
        static_cast<int>(std::min<std::int64_t>(kRowsBatch, (rows - first + step - 1) / step));
    for (int k = 0; k < count; ++k) {
      Acc acc = warp_reduce<Op>(
          fold_row<T, Op, kBlock, kVector>(in + (first + k * step) * stride, cols, col_step));
      if (lane == 0) parts[k][warp] = acc;
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < count) {
      Acc acc = parts[threadIdx.x][0];
#pragma unroll
      for (int w = 1; w < kWarps; ++w)
        acc = Op::combine(acc, parts[threadIdx.x][w]);
      write_result<Op>(acc, values, indices, first + threadIdx.x * step);
    }
    __syncthreads();  // parts is refilled by the next batch
  }
}

// ---------------------------------------------------------------------------------------------
// fast, axis cols: thread = strip of W columns (16 bytes when rows are 16-byte aligned and
// columns neighbours; else one column, its elements col_step apart), block row = chunk of rows;
// per-chunk partials and a ticket per column tile.

template <class T, class Op, int kBlock, int W>
__global__ void __launch_bounds__(kBlock)
    cols_chunked(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                 std::int64_t col_step, std::int64_t chunk_rows, typename Op::Acc* partials,
                 unsigned* counters, typename Op::Result* values, std::int64_t* indices) {
  using Acc = typename Op::Acc;
  const std::int64_t c0 = (static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x) * W;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * chunk_rows;
  const std::int64_t r1 = min(rows, r0 + chunk_rows);
  const bool full = c0 + W <= cols;
  Acc acc[W];
#pragma unroll
  for (int k = 0; k < W; ++k)
    acc[k] = Op::identity();
  if (c0 < cols) {
    std::int64_t r = r0;
    if (full && W * sizeof(T) == 16) {
      for (; r + kFastUnroll <= r1; r += kFastUnroll) {
        Vec16<T> x[kFastUnroll];
#pragma unroll
        for (int u = 0; u < kFastUnroll; ++u)
          x[u] = load16(in + (r + u) * stride + c0);
#pragma unroll
        for (int u = 0; u < kFastUnroll; ++u)
#pragma unroll
          for (int k = 0; k < W; ++k)
            acc[k] = Op::append(acc[k], x[u].v[k], r + u);
      }
    }
    for (; r < r1; ++r)
#pragma unroll
      for (int k = 0; k < W; ++k)
        if (c0 + k < cols) acc[k] = Op::append(acc[k], in[r * stride + (c0 + k) * col_step], r);
  }
  if (gridDim.y == 1) {
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (c0 + k < cols) write_result<Op>(acc[k], values, indices, c0 + k);
    return;
  }
#pragma unroll
  for (int k = 0; k < W; ++k)
    if (c0 + k < cols) partials[blockIdx.y * cols + c0 + k] = acc[k];
  __threadfence();
  __syncthreads();
  __shared__ bool is_last;
  if (threadIdx.x == 0) is_last = atomicAdd(counters + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!is_last) return;
  __threadfence();
#pragma unroll
  for (int k = 0; k < W; ++k) {
    if (c0 + k >= cols) continue;
    Acc total = Op::identity();
    for (unsigned y = 0; y < gridDim.y; ++y)
      total = Op::combine(total, load_coherent(partials + y * cols + c0 + k));
    write_result<Op>(total, values, indices, c0 + k);
  }
  if (threadIdx.x == 0) counters[blockIdx.x] = 0;
}

}  // namespace parpat::detail
