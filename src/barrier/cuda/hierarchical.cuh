// CUDA `hierarchical` (a cluster barrier in hardware, then one flip arrival per cluster; a grid
// of one cluster meets in the cluster barrier alone) and `cg` (cooperative groups' grid.sync, the
// baseline).
#pragma once

#include "barrier/cuda/words.cuh"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

struct CgBarrier {
  Words words;
  __device__ bool sync() {
    cg::this_grid().sync();
    return true;
  }
};

// Set in every block of a cluster, through distributed shared memory, when the cluster's
// global wait failed; read after the cluster barrier that follows.
__shared__ unsigned int cluster_failed;

__device__ inline void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
__device__ inline void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ inline void cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// The cluster's blocks meet in its hardware barrier, published by each block's warp 0 alone:
// after __syncthreads its release covers the writes of the whole block (a release is cumulative),
// so the other warps arrive relaxed; every thread waits with acquire. On the H100 this took
// 0.45 µs per barrier among 2 blocks of 1024 threads, against 0.68 with a release arrival by
// every thread (cooperative groups' cluster.sync()), whose releases queue; 0.40 against 0.38
// among 2 blocks of 128.
__device__ inline void meet_in_cluster() {
  __syncthreads();
  if (threadIdx.x < 32)
    cluster_arrive_release();
  else
    cluster_arrive_relaxed();
  cluster_wait_acquire();
}

// The cluster's blocks meet in its hardware barrier (meet_in_cluster: release/acquire, so the
// block that goes on has seen the cluster's writes). When the grid is one cluster that is the
// whole barrier: the hardware waits for every thread of the grid, and the cluster's blocks are
// resident together by construction, so there is no spin to bound (2 blocks of 1024 on the H100:
// 0.45 µs per barrier against cooperative groups' 1.10). Otherwise block rank 0 then arrives at
// the flip word of the public barrier (parpat/cuda/grid_barrier_words.cuh) for the whole
// cluster, with one of gridDim / cluster arrivals; only its thread 0 polls the word, and a
// second cluster barrier releases the cluster: the others arrive at it at once with a relaxed
// arrival and wait in hardware, rank 0's warp 0 arrives with release after thread 0's acquire,
// so that the acquire reaches every block (every block polling the word instead, with no
// second cluster barrier, measured slower). A failed wait is pushed into every block's
// `cluster_failed` before that arrival, so all blocks of a cluster leave with the same answer
// and nobody reads another block's shared memory (which may have exited). Every thread keeps
// the word's generation bit in a register, read at the start of the kernel, before any
// arrival, when the bit cannot flip yet.
struct HierarchicalBarrier {
  parpat::cuda::GridBarrier barrier;
  unsigned int generation;

  __device__ explicit HierarchicalBarrier(const parpat::cuda::GridBarrier& b)
      : barrier(b), generation(gb::load_relaxed(b.words) & gb::kGenerationBit) {
    if (threadIdx.x == 0) cluster_failed = 0;
  }

  __device__ bool sync() {
    cg::cluster_group cluster = cg::this_cluster();
    unsigned int* word = barrier.words;
    unsigned int clusters = gridDim.x / cluster.num_blocks();
    bool rank0 = cluster.block_rank() == 0;
    meet_in_cluster();
    if (clusters == 1) return true;
    generation ^= gb::kGenerationBit;
    if (rank0 && threadIdx.x < 32) {
      if (threadIdx.x == 0) {
        bool ok = gb::flip_arrive(barrier.layout, word, clusters, blockIdx.x == 0) ||
                  gb::wait_for_generation(barrier.layout, word, generation, barrier.words + 1,
                                          barrier.timeout_cycles);
        if (!ok)
          for (unsigned int rank = 0; rank < cluster.num_blocks(); ++rank)
            *cluster.map_shared_rank(&cluster_failed, rank) = 1u;
      }
      __syncwarp(gb::warp_lanes());  // warp 0 arrives together, after thread 0's wait
      cluster_arrive_release();
    } else {
      cluster_arrive_relaxed();
    }
    cluster_wait_acquire();
    return cluster_failed == 0;
  }
};

}  // namespace
}  // namespace parpat::detail
