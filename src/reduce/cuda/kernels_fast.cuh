// CUDA reduce `fast` over all elements: one launch, 16-byte loads with kFastUnroll in flight per
// thread, a grid sized to fill the device once, warp-wide block reductions, per-block partials
// folded in block order by the last block to take an acquire-release ticket; small inputs in one
// block, or (sm_90) one cluster whose blocks meet in block 0's shared memory. Each launch may
// overlap the end of the kernel before it (programmatic dependent launch).
#pragma once

#include <cooperative_groups.h>

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
// fast, axis all.

// Every block folds its grid-stride share; block results go to `partials`; the last block to
// take a ticket folds them in block order and resets the ticket counter for the next launch.
// kBatched: each thread keeps four partial loads in flight (small blocks on a wide grid have
// several partials per thread), at the cost of registers the bandwidth-bound form keeps.
template <class Op, bool kBatched = false>
__device__ void finish_by_last_block(typename Op::Acc v, typename Op::Acc* partials,
                                     unsigned* counter, typename Op::Result* values,
                                     std::int64_t* indices, std::int64_t o) {
  __shared__ bool is_last;
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) write_result<Op>(v, values, indices, o);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    is_last = take_ticket(counter) == gridDim.x - 1;
  }
  __syncthreads();  // the block's other threads read after thread 0's acquire
  if (!is_last) return;
  // Each thread folds partials threadIdx.x, + blockDim.x, ... in that order.
  typename Op::Acc acc = Op::identity();
  if constexpr (kBatched) {
    constexpr int kBatch = 4;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kBatch * blockDim.x) {
      typename Op::Acc p[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (b + u * blockDim.x < gridDim.x) p[u] = load_coherent(partials + b + u * blockDim.x);
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        if (b + u * blockDim.x < gridDim.x) acc = Op::combine(acc, p[u]);
    }
  } else {
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
      acc = Op::combine(acc, load_coherent(partials + b));
  }
  acc = block_reduce<Op>(acc);
  if (threadIdx.x == 0) {
    write_result<Op>(acc, values, indices, o);
    *counter = 0;
  }
}

// One cluster (sm_90): every block pushes its result into block 0's shared memory (distributed
// shared memory), the cluster meets at its hardware barrier (release/acquire), and block 0 folds
// the results in block order. After the loads there is no round trip to global memory, where
// the ticket of finish_by_last_block costs a fence, an atomic and a read of the partials.
// Block 0 may start later than the others: every thread arrives at the cluster barrier when
// its block starts (cluster_arrive_at_start) and waits on it before the first remote write.
__device__ __forceinline__ void cluster_arrive_at_start() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}

template <class Op>
__device__ void finish_in_cluster(typename Op::Acc v, typename Op::Result* values,
                                  std::int64_t* indices) {
#if __CUDA_ARCH__ >= 900
  using Acc = typename Op::Acc;
  __shared__ Acc results[kMaxCluster];
  auto cluster = cooperative_groups::this_cluster();
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");  // every block has started
  if (threadIdx.x == 0) *cluster.map_shared_rank(results + blockIdx.x, 0) = v;
  cluster.sync();
  if (blockIdx.x == 0 && threadIdx.x < kWarp) {
    Acc acc = threadIdx.x < gridDim.x ? results[threadIdx.x] : Op::identity();
    acc = warp_reduce<Op>(acc);
    if (threadIdx.x == 0) write_result<Op>(acc, values, indices, 0);
  }
#endif
}

// The bandwidth-bound form runs blocks of kFastBlock. kSmall is the latency-bound form for small
// inputs (fast_plan): any blockDim that is a multiple of 32 up to kFastBlock, a thread's last
// vectors loaded as one predicated batch, the partials folded four loads at a time. Both visit
// and fold in the same order, so for one grid they give the same bits.
template <class T, class Op, bool kSmall, bool kCluster = false>
__global__ void __launch_bounds__(kFastBlock)
    fast_all(const T* in, std::int64_t n, std::int64_t head, typename Op::Acc* partials,
             unsigned* counter, typename Op::Result* values, std::int64_t* indices, bool prefetch) {
  using Acc = typename Op::Acc;
  constexpr int V = Vec16<T>::kCount;
  const int block = kSmall ? static_cast<int>(blockDim.x) : kFastBlock;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * block;
  const std::int64_t gid = static_cast<std::int64_t>(blockIdx.x) * block + threadIdx.x;
  const std::int64_t vectors = (n - head) / V;
  const std::int64_t tail = head + vectors * V;
  const T* body = in + head;
  if constexpr (kCluster) cluster_arrive_at_start();
  allow_next_launch();
  if (kSmall && prefetch) {
    // Started early (programmatic dependent launch), a latency-bound launch pulls its first
    // batch of lines into L2 while the kernel before it finishes. A prefetch changes no value
    // the loads below return: L2 is where that kernel's writes land, and they come after it.
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      if (gid + u * stride < vectors) prefetch_to_l2(body + (gid + u * stride) * V);
  }
  wait_for_previous_kernel();
  // Each thread visits its elements in increasing index order: head, body, tail.
  Acc acc = Op::identity();
  if (gid < head) acc = Op::append(acc, in[gid], gid);
  std::int64_t v = gid;
  acc = fold_batches<Op>(acc, body, v, vectors, stride, head);
  if constexpr (kSmall) {
    if (v < vectors) {
      // Fewer than kFastUnroll vectors left (all of a thread's vectors on small inputs): one
      // batch of predicated loads in flight, so the thread waits for memory once.
      Vec16<T> x[kFastUnroll];
#pragma unroll
      for (int u = 0; u < kFastUnroll; ++u)
        if (v + u * stride < vectors) x[u] = load16(body + (v + u * stride) * V);
#pragma unroll
      for (int u = 0; u < kFastUnroll; ++u)
        if (v + u * stride < vectors) acc = fold16<Op>(acc, x[u], head + (v + u * stride) * V);
    }
  } else {
    for (; v < vectors; v += stride)
      acc = fold16<Op>(acc, load16(body + v * V), head + v * V);
  }
  if (gid < n - tail) acc = Op::append(acc, in[tail + gid], tail + gid);
  acc = block_reduce<Op>(acc);
  if constexpr (kCluster) {
    finish_in_cluster<Op>(acc, values, indices);
  } else {
    finish_by_last_block<Op, kSmall>(acc, partials, counter, values, indices, 0);
  }
}

// One row of elements `step` apart (a 1-D step view): every thread folds its grid-stride share
// with kFastUnroll scalar loads in flight, then blocks finish as fast_all's do.
template <class T, class Op>
__global__ void __launch_bounds__(kFastBlock)
    fast_all_stepped(const T* in, std::int64_t n, std::int64_t step, typename Op::Acc* partials,
                     unsigned* counter, typename Op::Result* values, std::int64_t* indices) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kFastBlock;
  const std::int64_t gid = static_cast<std::int64_t>(blockIdx.x) * kFastBlock + threadIdx.x;
  typename Op::Acc acc = fold_stepped<Op>(Op::identity(), in, step, gid, n, stride, 0);
  acc = block_reduce<Op>(acc);
  finish_by_last_block<Op>(acc, partials, counter, values, indices, 0);
}

// Strided 2-D input seen as one flat array: scalar loads through the row stride.
template <class T, class Op, int kBlock>
__global__ void __launch_bounds__(kBlock)
    fast_all_strided(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                     typename Op::Acc* partials, unsigned* counter, typename Op::Result* values,
                     std::int64_t* indices) {
  typename Op::Acc acc = Op::identity();
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (std::int64_t c = threadIdx.x; c < cols; c += kBlock)
      acc = Op::append(acc, in[r * stride + c], r * cols + c);
  acc = block_reduce<Op>(acc);
  finish_by_last_block<Op>(acc, partials, counter, values, indices, 0);
}

}  // namespace parpat::detail
