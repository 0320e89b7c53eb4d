// CUDA reduce variants. All of them fold with the operators of reduce_ops.hpp, so every variant
// computes the same function; they differ only in how the work is spread over the GPU.
//
//   tree        one element per thread into shared memory, halving tree with a barrier per
//               step, one partial per block; the host loops passes over two ping-pong buffers.
//   serial      each thread folds its own contiguous block of `items` elements (uncoalesced:
//               neighbouring threads read addresses `items` apart); host loop of passes.
//   gridstride  a fixed grid accumulates in registers over a grid-stride loop (coalesced), a
//               shared-memory tree per block, per-block partials, then a second launch of one
//               block.
//   atomic      one pass; block results meet in one global accumulator through atomicAdd or a
//               compare-and-swap loop (float sums then depend on arrival order).
//   fast        one launch: 16-byte loads, eight in flight per thread, a grid sized to fill the
//               device once, warp-shuffle block reduction (min, max and the arg ops by warp-wide
//               integer reductions of an order key instead, integer sums by three warp-wide
//               32-bit adds of bit fields), per-block partials, and the last
//               block to arrive (an acquire-release ticket) folds the partials in block order;
//               on sm_90 each launch overlaps the end of the kernel before it in the stream
//               (programmatic dependent launch). Small inputs are latency-bound instead: one
//               block with no ticket when they are tiny; up to 1 MiB on sm_90 one cluster of
//               16 blocks whose results meet in block 0's shared memory at the cluster barrier;
//               else smaller blocks with a few loads per thread spread over as many SMs as the
//               data covers, so every SM makes one short round trip (fast_plan,
//               plan_for_device). The grid and every fold order are fixed per size, so the
//               result is bit-identical run to run.
//               Rows (numpy axis=1) use a thread, a warp or a block per row by row length;
//               columns (axis=0) give each thread a 16-byte strip of columns over a chunk of
//               rows, and the last chunk of a column strip to finish folds the chunks in order.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "parpat/cuda/reduce.hpp"
#include "reduce/cuda_primitives.cuh"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

constexpr int kWarp = 32;
constexpr int kFastUnroll = 8;
constexpr int kFastBlock = 512;  // the largest block of fast_all: its launch bound
constexpr int kMaxCluster = 16;  // the largest thread-block cluster (sm_90, non-portable)

// ---------------------------------------------------------------------------------------------
// Device helpers

template <class T>
__device__ __forceinline__ T shuffle_down(T v, int delta) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<unsigned>(v), delta));
  } else {
    return __shfl_down_sync(0xffffffffu, v, delta);
  }
}

template <class T>
__device__ __forceinline__ T shuffle_from(T v, int lane) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_sync(0xffffffffu, static_cast<unsigned>(v), lane));
  } else {
    return __shfl_sync(0xffffffffu, v, lane);
  }
}

template <class T>
__device__ __forceinline__ ArgPair<T> shuffle_down(ArgPair<T> v, int delta) {
  return {shuffle_down(v.value, delta), shuffle_down(v.index, delta)};
}

// Reads memory written by other blocks of this launch, bypassing the non-coherent L1.
template <class T>
__device__ __forceinline__ T load_coherent(const T* p) {
  return *reinterpret_cast<const volatile T*>(p);
}
template <class T>
__device__ __forceinline__ ArgPair<T> load_coherent(const ArgPair<T>* p) {
  return {load_coherent(&p->value), load_coherent(&p->index)};
}

// min, max, argmin and argmax as orders of unsigned integers, larger = better, so that a warp
// folds them in warp-wide integer reductions (redux.sync): a NaN above everything (it wins, and
// for arg ops the first NaN wins), floats by the sign-magnitude flip, signed integers by the
// sign-bit flip, the minimum by inverting the bits. Arg ops take −0.0 equal to +0.0 (a tie, so
// the first index wins); min and max keep the sign of a zero in the key (−0.0 below +0.0), so
// the key gives the value back: between lanes max takes +0.0 over −0.0, while a thread's own
// fold keeps the zero it saw first (either is numpy's answer).
template <class T>
using OrderKey = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;

template <class T, bool kMin, bool kZeroTies>
__device__ __forceinline__ OrderKey<T> order_key(T v) {
  using Key = OrderKey<T>;
  constexpr Key kTop = Key(1) << (8 * sizeof(Key) - 1);
  Key key;
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) return ~Key(0);
    Key bits = 0;
    if (!kZeroTies || v != T(0)) memcpy(&bits, &v, sizeof(T));
    key = (bits & kTop) ? ~bits : bits | kTop;
  } else if constexpr (std::is_signed_v<T>) {
    key = static_cast<Key>(v) ^ kTop;
  } else {
    key = static_cast<Key>(v);
  }
  return kMin ? ~key : key;
}

// The value of a min/max order key (order_key without zero ties); ~0 is a NaN.
template <class T, bool kMin>
__device__ __forceinline__ T value_of_key(OrderKey<T> key) {
  using Key = OrderKey<T>;
  constexpr Key kTop = Key(1) << (8 * sizeof(Key) - 1);
  if constexpr (std::is_floating_point_v<T>) {
    if (key == ~Key(0)) return std::numeric_limits<T>::quiet_NaN();
    if (kMin) key = ~key;
    Key bits = (key & kTop) ? key & ~kTop : ~key;
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
  } else {
    if (kMin) key = ~key;
    return static_cast<T>(std::is_signed_v<T> ? key ^ kTop : key);
  }
}

template <class Op>
struct WarpOrder : std::false_type {};
template <class T>
struct WarpOrder<MinOp<T>> : std::true_type {
  static constexpr bool kArg = false, kMin = true;
};
template <class T>
struct WarpOrder<MaxOp<T>> : std::true_type {
  static constexpr bool kArg = false, kMin = false;
};
template <class T, bool kMinimum>
struct WarpOrder<ArgOp<T, kMinimum>> : std::true_type {
  static constexpr bool kArg = true, kMin = kMinimum;
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
// The largest key of a warp: one reduction, or for 64-bit keys the high word, then the low word
// among the lanes that hold the largest high word. Every lane takes part in every reduction.
__device__ __forceinline__ unsigned warp_max_key(unsigned key) {
  return __reduce_max_sync(0xffffffffu, key);
}
__device__ __forceinline__ unsigned long long warp_max_key(unsigned long long key) {
  const unsigned high = static_cast<unsigned>(key >> 32);
  const unsigned top = __reduce_max_sync(0xffffffffu, high);
  const unsigned low = high == top ? static_cast<unsigned>(key) : 0u;
  return (static_cast<unsigned long long>(top) << 32) | __reduce_max_sync(0xffffffffu, low);
}

// min, max, argmin and argmax over a warp in warp-wide integer reductions instead of five rounds
// of shuffles (for arg ops each moving a value and a 64-bit index and comparing both). min and
// max: the largest key, turned back into its value. Arg ops: the largest key, then the smallest
// index among the lanes holding it (high word, then low word), then the value from that lane —
// the pair the shuffle tree gives, since combine picks by key and ties by index.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce_ordered(typename Op::Acc v) {
  using Order = WarpOrder<Op>;
  if constexpr (!Order::kArg) {
    using T = typename Op::Acc;
    return value_of_key<T, Order::kMin>(warp_max_key(order_key<T, Order::kMin, false>(v)));
  } else {
    using T = decltype(v.value);
    constexpr unsigned kAll = 0xffffffffu;
    const auto key = order_key<T, Order::kMin, true>(v.value);
    bool best = key == warp_max_key(key);
    const auto index = static_cast<unsigned long long>(v.index);
    const unsigned index_high = best ? static_cast<unsigned>(index >> 32) : ~0u;
    const unsigned first_high = __reduce_min_sync(kAll, index_high);
    best = best && index_high == first_high;
    const unsigned index_low = best ? static_cast<unsigned>(index) : ~0u;
    const unsigned first_low = __reduce_min_sync(kAll, index_low);
    const int lane = __ffs(__ballot_sync(kAll, best && index_low == first_low)) - 1;
    typename Op::Acc out;
    out.value = shuffle_from(v.value, lane);
    out.index =
        static_cast<std::int64_t>((static_cast<unsigned long long>(first_high) << 32) | first_low);
    return out;
  }
}
#endif

template <class Op>
struct WarpIntegerSum : std::false_type {};
template <class T>
struct WarpIntegerSum<SumOp<T>> : std::bool_constant<!std::is_floating_point_v<T>> {};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
// The wrapping 64-bit sum of a warp in three warp-wide 32-bit additions instead of five rounds of
// two shuffles and a 64-bit add: the value is cut into fields of 22, 22 and 20 bits, each field
// summed over the 32 lanes (less than 2^27, no carry lost), and the three sums shifted back into
// place and added modulo 2^64 — the same bits as adding the lanes in any order.
__device__ __forceinline__ std::uint64_t warp_sum_u64(std::uint64_t v) {
  constexpr unsigned kAll = 0xffffffffu;
  constexpr std::uint64_t kField = (std::uint64_t{1} << 22) - 1;
  const unsigned low = __reduce_add_sync(kAll, static_cast<unsigned>(v & kField));
  const unsigned mid = __reduce_add_sync(kAll, static_cast<unsigned>((v >> 22) & kField));
  const unsigned high = __reduce_add_sync(kAll, static_cast<unsigned>(v >> 44));
  return std::uint64_t{low} + (std::uint64_t{mid} << 22) + (std::uint64_t{high} << 44);
}
#endif

template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce_by_shuffles(typename Op::Acc v) {
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2)
    v = Op::combine(v, shuffle_down(v, d));
  return v;
}

template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc v) {
#if __CUDA_ARCH__ >= 800
  if constexpr (WarpOrder<Op>::value) {
    return warp_reduce_ordered<Op>(v);
  } else if constexpr (WarpIntegerSum<Op>::value) {
    return warp_sum_u64(v);
  } else {
    return warp_reduce_by_shuffles<Op>(v);
  }
#else
  return warp_reduce_by_shuffles<Op>(v);
#endif
}

// Block-wide fold with shuffles; the result is valid in thread 0. Any blockDim that is a
// multiple of 32 up to 1024.
template <class Op>
__device__ typename Op::Acc block_reduce(typename Op::Acc v) {
  using Acc = typename Op::Acc;
  __shared__ Acc warp_results[32];
  int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_reduce<Op>(v);
  if (blockDim.x == kWarp) return v;  // one warp (tiny inputs): no shared-memory round
  __syncthreads();                    // warp_results may still be read by a previous call
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  int warps = blockDim.x / kWarp;
  if (warp == 0) {
    v = lane < warps ? warp_results[lane] : Op::identity();
    v = warp_reduce<Op>(v);
  }
  return v;
}

template <class Op>
__device__ __forceinline__ void write_result(const typename Op::Acc& acc,
                                             typename Op::Result* values, std::int64_t* indices,
                                             std::int64_t o) {
  values[o] = Op::result(acc);
  if constexpr (is_arg_pair<typename Op::Acc>::value) indices[o] = acc.index;
}

// Element i of a (possibly strided) matrix seen as a flat array of rows × cols.
template <class T>
__device__ __forceinline__ T flat_at(const T* in, std::int64_t i, std::int64_t cols,
                                     std::int64_t stride) {
  return stride == cols ? in[i] : in[(i / cols) * stride + i % cols];
}

template <class T>
struct Vec16 {
  static constexpr int kCount = 16 / sizeof(T);
  T v[kCount];
};

template <class T>
__device__ __forceinline__ Vec16<T> load16(const T* p) {
  uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  Vec16<T> out;
  memcpy(&out, &raw, 16);
  return out;
}

// Folds a 16-byte vector whose first element has flat index `base`. Byte sums take the
// dot-product unit: four bytes per instruction instead of one add each. Arg ops find the
// vector's best lane comparing values only (the first of equals stays) and append that lane:
// one 64-bit index select per vector instead of one per lane, the same pair as lane by lane.
template <class Op, class T>
__device__ __forceinline__ typename Op::Acc fold16(typename Op::Acc acc, const Vec16<T>& x,
                                                   std::int64_t base) {
  if constexpr (std::is_same_v<Op, SumOp<std::uint8_t>>) {
    unsigned words[4];
    memcpy(words, x.v, 16);
    unsigned s = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
      s = __dp4a(words[k], 0x01010101u, s);
    return acc + s;
  } else if constexpr (is_arg_pair<typename Op::Acc>::value) {
    T best = x.v[0];
    int lane = 0;
#pragma unroll
    for (int k = 1; k < Vec16<T>::kCount; ++k) {
      bool better = Op::beats(x.v[k], best);
      best = better ? x.v[k] : best;
      lane = better ? k : lane;
    }
    return Op::append(acc, best, base + lane);
  } else {
#pragma unroll
    for (int k = 0; k < Vec16<T>::kCount; ++k)
      acc = Op::append(acc, x.v[k], base + k);
    return acc;
  }
}

// Folds full batches of kFastUnroll vectors, vectors v, v + stride, ... of `body` (vector j's
// first element has flat index base + j · its length): all loads of a batch are issued before
// any fold, so each thread keeps kFastUnroll 16-byte loads in flight. Leaves v at the first
// vector of the unfinished batch.
template <class Op, class T>
__device__ __forceinline__ typename Op::Acc fold_batches(typename Op::Acc acc, const T* body,
                                                         std::int64_t& v, std::int64_t vectors,
                                                         std::int64_t stride, std::int64_t base) {
  constexpr int V = Vec16<T>::kCount;
  for (; v + (kFastUnroll - 1) * stride < vectors; v += kFastUnroll * stride) {
    Vec16<T> x[kFastUnroll];
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      x[u] = load16(body + (v + u * stride) * V);
#pragma unroll
    for (int u = 0; u < kFastUnroll; ++u)
      acc = fold16<Op>(acc, x[u], base + (v + u * stride) * V);
  }
  return acc;
}

// ---------------------------------------------------------------------------------------------
// tree: one element per thread, halving tree in shared memory.

template <class T, class Op, bool kFromInput>
__global__ void tree_pass(const void* in, std::int64_t n, std::int64_t cols, std::int64_t stride,
                          typename Op::Acc* partials, typename Op::Result* values,
                          std::int64_t* indices) {
  using Acc = typename Op::Acc;
  extern __shared__ unsigned char tree_smem[];
  Acc* s = reinterpret_cast<Acc*>(tree_smem);
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Acc v = Op::identity();
  if (i < n) {
    if constexpr (kFromInput) {
      v = Op::load(flat_at(static_cast<const T*>(in), i, cols, stride), i);
    } else {
      v = static_cast<const Acc*>(in)[i];
    }
  }
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] = Op::combine(s[threadIdx.x], s[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (gridDim.x == 1)
      write_result<Op>(s[0], values, indices, 0);
    else
      partials[blockIdx.x] = s[0];
  }
}

// serial: each thread folds `items` consecutive elements on its own.
template <class T, class Op, bool kFromInput>
__global__ void serial_pass(const void* in, std::int64_t n, std::int64_t cols, std::int64_t stride,
                            int items, typename Op::Acc* partials, typename Op::Result* values,
                            std::int64_t* indices) {
  using Acc = typename Op::Acc;
  std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t begin = t * items;
  if (begin >= n) return;
  std::int64_t end = min(n, begin + items);
  Acc v = Op::identity();
  for (std::int64_t i = begin; i < end; ++i) {
    if constexpr (kFromInput) {
      v = Op::combine(v, Op::load(flat_at(static_cast<const T*>(in), i, cols, stride), i));
    } else {
      v = Op::combine(v, static_cast<const Acc*>(in)[i]);
    }
  }
  if (n <= items)
    write_result<Op>(v, values, indices, 0);
  else
    partials[t] = v;
}

// gridstride: registers over a grid-stride loop, then the classic shared-memory tree.
template <class Op>
__device__ typename Op::Acc shared_tree(typename Op::Acc v) {
  using Acc = typename Op::Acc;
  extern __shared__ unsigned char tree_smem[];
  Acc* s = reinterpret_cast<Acc*>(tree_smem);
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] = Op::combine(s[threadIdx.x], s[threadIdx.x + half]);
    __syncthreads();
  }
  return s[0];
}

template <class T, class Op>
__global__ void gridstride_partials(const T* in, std::int64_t n, std::int64_t cols,
                                    std::int64_t stride, typename Op::Acc* partials) {
  typename Op::Acc v = Op::identity();
  std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    v = Op::combine(v, Op::load(flat_at(in, i, cols, stride), i));
  v = shared_tree<Op>(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

template <class Op>
__global__ void gridstride_finish(const typename Op::Acc* partials, int count,
                                  typename Op::Result* values, std::int64_t* indices) {
  typename Op::Acc v = Op::identity();
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    v = Op::combine(v, partials[i]);
  v = shared_tree<Op>(v);
  if (threadIdx.x == 0) write_result<Op>(v, values, indices, 0);
}

// atomic: one global accumulator. Ops without a native atomic fold through compare-and-swap
// on the accumulator's bit pattern.
template <class Op>
__device__ void atomic_combine(typename Op::Acc* slot, typename Op::Acc v) {
  using Acc = typename Op::Acc;
  using Word = std::conditional_t<sizeof(Acc) == 8, unsigned long long, unsigned>;
  Word* word = reinterpret_cast<Word*>(slot);
  Word seen = *reinterpret_cast<volatile Word*>(word), expected;
  do {
    expected = seen;
    Acc current;
    memcpy(&current, &expected, sizeof(Acc));
    Acc next = Op::combine(current, v);
    Word desired;
    memcpy(&desired, &next, sizeof(Acc));
    if (desired == expected) return;
    seen = atomicCAS(word, expected, desired);
  } while (seen != expected);
}

template <class Op>
__global__ void atomic_init(typename Op::Acc* slot) {
  *slot = Op::identity();
}

template <class T, class Op>
__global__ void atomic_pass(const T* in, std::int64_t n, std::int64_t cols, std::int64_t stride,
                            typename Op::Acc* slot) {
  typename Op::Acc v = Op::identity();
  std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    v = Op::combine(v, Op::load(flat_at(in, i, cols, stride), i));
  v = block_reduce<Op>(v);
  if (threadIdx.x == 0) {
    if constexpr (std::is_same_v<Op, SumOp<std::uint8_t>> ||
                  std::is_same_v<Op, SumOp<std::int32_t>> ||
                  std::is_same_v<Op, SumOp<std::uint32_t>> ||
                  std::is_same_v<Op, SumOp<std::int64_t>> ||
                  std::is_same_v<Op, SumOp<std::uint64_t>>) {
      atomicAdd(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(v));
    } else if constexpr (std::is_same_v<Op, SumOp<float>> || std::is_same_v<Op, SumOp<double>>) {
      atomicAdd(slot, v);
    } else {
      atomic_combine<Op>(slot, v);
    }
  }
}

template <class Op>
__global__ void atomic_finish(const typename Op::Acc* slot, typename Op::Result* values) {
  values[0] = Op::result(*slot);
}

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

// ---------------------------------------------------------------------------------------------
// fast, axis rows.

template <class T, class Op>
__global__ void rows_by_thread(const T* in, std::int64_t rows, std::int64_t cols,
                               std::int64_t stride, typename Op::Result* values,
                               std::int64_t* indices) {
  std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  typename Op::Acc acc = Op::identity();
  for (std::int64_t c = 0; c < cols; ++c)
    acc = Op::append(acc, in[r * stride + c], c);
  write_result<Op>(acc, values, indices, r);
}

template <class T, class Op>
__global__ void rows_by_warp(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                             typename Op::Result* values, std::int64_t* indices) {
  std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  if (r >= rows) return;  // whole warps leave together: rows are warp-uniform
  int lane = threadIdx.x % kWarp;
  typename Op::Acc acc = Op::identity();
  const T* row = in + r * stride;
  for (std::int64_t c = lane; c < cols; c += kWarp)
    acc = Op::append(acc, row[c], c);
  acc = warp_reduce<Op>(acc);
  if (lane == 0) write_result<Op>(acc, values, indices, r);
}

// One block's fold of a row: thread t visits vectors t, t + kBlock, ... in order (kFastUnroll
// loads in flight), then the scalar tail; a row that is not 16-byte aligned goes element by
// element.
template <class T, class Op, int kBlock, bool kVector>
__device__ __forceinline__ typename Op::Acc fold_row(const T* row, std::int64_t cols) {
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
    for (std::int64_t c = threadIdx.x; c < cols; c += kBlock)
      acc = Op::append(acc, row[c], c);
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
                  typename Op::Result* values, std::int64_t* indices) {
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
      Acc acc =
          warp_reduce<Op>(fold_row<T, Op, kBlock, kVector>(in + (first + k * step) * stride, cols));
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
// fast, axis cols: thread = strip of W columns (16 bytes when rows are 16-byte aligned), block
// row = chunk of rows; per-chunk partials and a ticket per column tile.

template <class T, class Op, int kBlock, int W>
__global__ void __launch_bounds__(kBlock)
    cols_chunked(const T* in, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                 std::int64_t chunk_rows, typename Op::Acc* partials, unsigned* counters,
                 typename Op::Result* values, std::int64_t* indices) {
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
        if (c0 + k < cols) acc[k] = Op::append(acc[k], in[r * stride + c0 + k], r);
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

// ---------------------------------------------------------------------------------------------
// Host side

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

template <class T, class Op>
class CudaReduce : public ReduceKernel {
 protected:
  using Acc = typename Op::Acc;
  using R = typename Op::Result;

  CudaReduce(const Device& d, const ReduceShape& s)
      : device_(d), cuda_(backend_cast<CudaDevice>(d)), s_(s) {}

  const T* input(const Buffer& in) const { return static_cast<const T*>(in.handle()); }
  static R* out(const Buffer& b) { return static_cast<R*>(b.handle()); }
  static std::int64_t* idx(const Buffer& b) { return static_cast<std::int64_t*>(b.handle()); }
  Acc* acc_buffer(const Buffer& b) const { return static_cast<Acc*>(b.handle()); }
  Buffer zeroed(std::size_t bytes) const {
    Buffer b(device_, bytes);
    PARPAT_CUDA(cudaMemsetAsync(b.handle(), 0, b.bytes(), cuda_.stream()));
    PARPAT_CUDA(cudaStreamSynchronize(cuda_.stream()));
    return b;
  }

  Device device_;
  CudaDevice& cuda_;
  ReduceShape s_;
};

template <class T, class Op>
class TreeReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  TreeReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    block_ = tuning(d.info(), "reduce.tree.block", 256);
    std::int64_t first = ceil_div(s.size(), block_);
    a_ = Buffer(d, std::max<std::int64_t>(first, 1) * sizeof(Acc));
    b_ = Buffer(d, std::max<std::int64_t>(ceil_div(first, block_), 1) * sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    auto stream = this->cuda_.stream();
    std::size_t smem = block_ * sizeof(Acc);
    std::int64_t n = this->s_.size();
    std::int64_t blocks = ceil_div(n, block_);
    tree_pass<T, Op, true><<<blocks, block_, smem, stream>>>(
        in.handle(), n, this->s_.cols, this->s_.row_stride, this->acc_buffer(a_), this->out(values),
        this->idx(indices));
    check_launch("tree_pass");
    const Buffer* src = &a_;
    const Buffer* dst = &b_;
    while (blocks > 1) {
      n = blocks;
      blocks = ceil_div(n, block_);
      tree_pass<T, Op, false><<<blocks, block_, smem, stream>>>(
          src->handle(), n, n, n, this->acc_buffer(*dst), this->out(values), this->idx(indices));
      check_launch("tree_pass");
      std::swap(src, dst);
    }
  }

 private:
  int block_;
  Buffer a_, b_;
};

template <class T, class Op>
class SerialReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  SerialReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    block_ = tuning(d.info(), "reduce.serial.block", 256);
    items_ = tuning(d.info(), "reduce.serial.items", 64);
    std::int64_t first = ceil_div(s.size(), items_);
    a_ = Buffer(d, std::max<std::int64_t>(first, 1) * sizeof(Acc));
    b_ = Buffer(d, std::max<std::int64_t>(ceil_div(first, items_), 1) * sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    auto stream = this->cuda_.stream();
    std::int64_t n = this->s_.size();
    std::int64_t threads = ceil_div(n, items_);
    serial_pass<T, Op, true><<<ceil_div(threads, block_), block_, 0, stream>>>(
        in.handle(), n, this->s_.cols, this->s_.row_stride, items_, this->acc_buffer(a_),
        this->out(values), this->idx(indices));
    check_launch("serial_pass");
    const Buffer* src = &a_;
    const Buffer* dst = &b_;
    while (threads > 1) {
      n = threads;
      threads = ceil_div(n, items_);
      serial_pass<T, Op, false><<<ceil_div(threads, block_), block_, 0, stream>>>(
          src->handle(), n, n, n, items_, this->acc_buffer(*dst), this->out(values),
          this->idx(indices));
      check_launch("serial_pass");
      std::swap(src, dst);
    }
  }

 private:
  int block_, items_;
  Buffer a_, b_;
};

template <class T, class Op>
class GridStrideReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  GridStrideReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    block_ = tuning(d.info(), "reduce.gridstride.block", 256);
    grid_ = static_cast<int>(std::clamp<std::int64_t>(
        ceil_div(s.size(), block_), 1,
        d.info().compute_units * tuning(d.info(), "reduce.gridstride.blocks_per_cu", 8)));
    partials_ = Buffer(d, grid_ * sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    auto stream = this->cuda_.stream();
    std::size_t smem = block_ * sizeof(Acc);
    gridstride_partials<T, Op><<<grid_, block_, smem, stream>>>(this->input(in), this->s_.size(),
                                                                this->s_.cols, this->s_.row_stride,
                                                                this->acc_buffer(partials_));
    check_launch("gridstride_partials");
    gridstride_finish<Op><<<1, block_, smem, stream>>>(this->acc_buffer(partials_), grid_,
                                                       this->out(values), this->idx(indices));
    check_launch("gridstride_finish");
  }

 private:
  int block_, grid_;
  Buffer partials_;
};

template <class T, class Op>
class AtomicReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;

 public:
  AtomicReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    block_ = tuning(d.info(), "reduce.atomic.block", 256);
    grid_ = static_cast<int>(std::clamp<std::int64_t>(
        ceil_div(s.size(), block_), 1,
        d.info().compute_units * tuning(d.info(), "reduce.atomic.blocks_per_cu", 8)));
    slot_ = Buffer(d, sizeof(Acc));
  }
  void run(const Buffer& in, const Buffer& values, const Buffer&) override {
    auto stream = this->cuda_.stream();
    Acc* slot = this->acc_buffer(slot_);
    atomic_init<Op><<<1, 1, 0, stream>>>(slot);
    check_launch("atomic_init");
    atomic_pass<T, Op><<<grid_, block_, 0, stream>>>(this->input(in), this->s_.size(),
                                                     this->s_.cols, this->s_.row_stride, slot);
    check_launch("atomic_pass");
    atomic_finish<Op><<<1, 1, 0, stream>>>(slot, this->out(values));
    check_launch("atomic_finish");
  }

 private:
  int block_, grid_;
  Buffer slot_;
};

constexpr int kRowsBlock = 256;
constexpr int kColsBlock = 128;

struct FastPlan {
  int grid = 1, block = kFastBlock;
  bool small = false;           // fast_all's latency-bound form
  int cluster = 0;              // > 0: one cluster of this many blocks (finish_in_cluster)
  bool overlap_launch = false;  // programmatic dependent launch (sm_90 and later)
  bool prefetch = false;  // small forms: prefetch into L2 before waiting for the kernel before
};

// The launch of `fast` over `n` contiguous elements, by size:
//   tiny (at most reduce.fast.single_block_bytes): one block, no ticket, a thread per
//     reduce.fast.single_block_items vectors (rounded up to whole warps, at most kFastBlock;
//     one warp skips the block reduction's shared-memory round);
//   small (the bandwidth-bound grid below would not fill the device): blocks of
//     reduce.fast.small_block threads, each thread about reduce.fast.small_items vectors, as many
//     blocks as that takes up to one resident wave, so the data is spread over as many SMs as
//     it covers and each thread makes one short round trip;
//   large: one wave of kFastBlock-thread blocks, reduce.fast.blocks_per_cu per SM as far as
//     occupancy allows, kFastUnroll loads in flight per thread, never more blocks than there is
//     work for.
template <class T, class Op>
FastPlan fast_plan(const DeviceInfo& info, std::int64_t n) {
  const std::int64_t vectors = ceil_div(n, Vec16<T>::kCount);
  auto items_of = [&](const char* key) -> std::int64_t {
    return std::clamp(tuning(info, key, 2), 1, kFastUnroll);
  };
  auto warps_of = [](std::int64_t threads) {
    return static_cast<int>(
        std::clamp<std::int64_t>(ceil_div(threads, kWarp) * kWarp, kWarp, kFastBlock));
  };
  auto resident_blocks = [](auto kernel, int block) {
    int resident = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, block, 0));
    return std::max(resident, 1);
  };
  if (n * static_cast<std::int64_t>(sizeof(T)) <=
      tuning(info, "reduce.fast.single_block_bytes", 32768))
    return {1, warps_of(ceil_div(vectors, items_of("reduce.fast.single_block_items"))), true};
  const std::int64_t cus = std::max(info.compute_units, 1);
  const std::int64_t fill =
      cus * std::min(resident_blocks(fast_all<T, Op, false>, kFastBlock),
                     std::max(1, tuning(info, "reduce.fast.blocks_per_cu", 4)));
  const std::int64_t large = ceil_div(vectors, kFastBlock * kFastUnroll);
  if (large >= fill) return {static_cast<int>(fill), kFastBlock, false};
  const int block = warps_of(tuning(info, "reduce.fast.small_block", 256));
  const std::int64_t wave = cus * resident_blocks(fast_all<T, Op, true>, block);
  const std::int64_t blocks = ceil_div(vectors, block * items_of("reduce.fast.small_items"));
  return {static_cast<int>(std::clamp<std::int64_t>(blocks, 1, wave)), block, true};
}

// The launch attribute of a one-dimensional cluster of `size` blocks.
cudaLaunchAttribute cluster_of(int size) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = static_cast<unsigned>(size);
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = 1;
  return a;
}

// The largest cluster of fast_all's cluster form, a power of two from `largest` down to 2,
// that device `ordinal` can place at all, or 0 when none. The occupancy queries behind it are
// slow, so each (device, largest) is asked once: the raw CUDA API plans on every call.
template <class T, class Op>
int placeable_cluster(int ordinal, int largest) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = known.find({ordinal, largest});
  if (found != known.end()) return found->second;
  auto kernel = fast_all<T, Op, true, true>;
  PARPAT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int placeable = 0;
  for (int size = largest; size >= 2 && placeable == 0; size /= 2) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(size);
    config.blockDim = dim3(kFastBlock);
    cudaLaunchAttribute cluster = cluster_of(size);
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      (void)cudaGetLastError();  // a size the device cannot place: try a smaller one
      continue;
    }
    if (clusters >= 1) placeable = size;
  }
  known.emplace(std::make_pair(ordinal, largest), placeable);
  return placeable;
}

// Finishes planning on the device `ordinal`: on sm_90 and later, launches overlap the kernel
// before them, and a latency-bound input of at most reduce.fast.cluster_bytes runs as one
// cluster of up to reduce.fast.cluster_size blocks of kFastBlock threads (finish_in_cluster),
// when the device can place such a cluster.
template <class T, class Op>
void plan_for_device(FastPlan& plan, const DeviceInfo& info, std::int64_t n, int ordinal) {
  int major = 0;
  PARPAT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal));
  if (major < 9) return;
  plan.overlap_launch = tuning(info, "reduce.fast.overlap_launch", 1) != 0;
  plan.prefetch = plan.overlap_launch && tuning(info, "reduce.fast.prefetch", 1) != 0;
  if (!plan.small || plan.grid == 1 ||
      n * static_cast<std::int64_t>(sizeof(T)) > tuning(info, "reduce.fast.cluster_bytes", 1 << 20))
    return;
  int size = placeable_cluster<T, Op>(
      ordinal, std::min(tuning(info, "reduce.fast.cluster_size", kMaxCluster), kMaxCluster));
  if (size >= 2) {
    plan.grid = size;
    plan.block = kFastBlock;
    plan.cluster = size;
  }
}

// Launches fast_all with programmatic stream serialization where the device has it (sm_90 and
// later): the kernel may start launching before the previous one in the stream ends, and waits
// for it inside (wait_for_previous_kernel) before it reads or writes memory.
template <class T, class Op>
void launch_fast_all(const FastPlan& plan, cudaStream_t stream, const T* in, std::int64_t n,
                     std::int64_t head, typename Op::Acc* partials, unsigned* counter,
                     typename Op::Result* values, std::int64_t* indices) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(plan.grid);
  config.blockDim = dim3(plan.small ? plan.block : kFastBlock);
  config.stream = stream;
  cudaLaunchAttribute attrs[2];
  unsigned count = 0;
  if (plan.overlap_launch) {
    attrs[count] = cudaLaunchAttribute{};
    attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[count++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (plan.cluster) attrs[count++] = cluster_of(plan.cluster);
  config.attrs = attrs;
  config.numAttrs = count;
  auto kernel = plan.cluster ? fast_all<T, Op, true, true>
                : plan.small ? fast_all<T, Op, true>
                             : fast_all<T, Op, false>;
  PARPAT_CUDA(cudaLaunchKernelEx(&config, kernel, in, n, head, partials, counter, values, indices,
                                 plan.prefetch));
}

template <class T, class Op>
class FastReduce final : public CudaReduce<T, Op> {
  using Base = CudaReduce<T, Op>;
  using typename Base::Acc;
  static constexpr int V = Vec16<T>::kCount;

 public:
  FastReduce(const Device& d, const ReduceShape& s) : Base(d, s) {
    const auto& info = d.info();
    if (s.axis == Axis::all) {
      if (s.contiguous()) {
        plan_ = fast_plan<T, Op>(info, s.size());
        plan_for_device<T, Op>(plan_, info, s.size(), this->cuda_.ordinal());
      } else
        plan_.grid = static_cast<int>(std::clamp<std::int64_t>(s.rows, 1, info.compute_units * 4));
      partials_ = Buffer(d, plan_.grid * sizeof(Acc));
      counters_ = this->zeroed(sizeof(unsigned));
    } else if (s.axis == Axis::rows) {
      rows_grid_ = rows_grid(info, s.rows);
    } else if (s.axis == Axis::cols) {
      bool vec = (s.row_stride * sizeof(T)) % 16 == 0;
      width_ = vec ? V : 1;
      col_tiles_ = ceil_div(s.cols, static_cast<std::int64_t>(kColsBlock) * width_);
      std::int64_t fill = static_cast<std::int64_t>(info.compute_units) * 8;
      std::int64_t chunks = std::clamp<std::int64_t>(fill / col_tiles_, 1, 65535);
      chunks = std::min(chunks, ceil_div(s.rows, 16));  // at least 16 rows per chunk
      chunk_rows_ = ceil_div(s.rows, std::max<std::int64_t>(chunks, 1));
      chunks_ = ceil_div(s.rows, chunk_rows_);
      partials_ = Buffer(d, std::max<std::int64_t>(chunks_ * s.cols, 1) * sizeof(Acc));
      counters_ = this->zeroed(col_tiles_ * sizeof(unsigned));
    }
  }

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    const auto& s = this->s_;
    auto stream = this->cuda_.stream();
    const T* x = this->input(in);
    auto* out = this->out(values);
    auto* idx = this->idx(indices);
    if (s.axis == Axis::all) {
      auto* partials = this->acc_buffer(partials_);
      auto* counter = static_cast<unsigned*>(counters_.handle());
      if (s.contiguous()) {
        auto addr = reinterpret_cast<std::uintptr_t>(x);
        std::int64_t head = std::min<std::int64_t>(s.size(), ((16 - addr % 16) % 16) / sizeof(T));
        launch_fast_all<T, Op>(plan_, stream, x, s.size(), head, partials, counter, out, idx);
      } else {
        fast_all_strided<T, Op, kFastBlock><<<plan_.grid, kFastBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, partials, counter, out, idx);
        check_launch("fast_all_strided");
      }
    } else if (s.axis == Axis::rows) {
      if (s.cols <= 32) {
        rows_by_thread<T, Op>
            <<<ceil_div(s.rows, 256), 256, 0, stream>>>(x, s.rows, s.cols, s.row_stride, out, idx);
        check_launch("rows_by_thread");
      } else if (s.cols <= 2048) {
        rows_by_warp<T, Op><<<ceil_div(s.rows * kWarp, 256), 256, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, out, idx);
        check_launch("rows_by_warp");
      } else {
        int grid = rows_grid_;
        bool vec =
            reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && (s.row_stride * sizeof(T)) % 16 == 0;
        if (vec) {
          rows_by_block<T, Op, kRowsBlock, true>
              <<<grid, kRowsBlock, 0, stream>>>(x, s.rows, s.cols, s.row_stride, out, idx);
        } else {
          rows_by_block<T, Op, kRowsBlock, false>
              <<<grid, kRowsBlock, 0, stream>>>(x, s.rows, s.cols, s.row_stride, out, idx);
        }
        check_launch("rows_by_block");
      }
    } else {
      dim3 grid(static_cast<unsigned>(col_tiles_), static_cast<unsigned>(chunks_));
      auto* partials = this->acc_buffer(partials_);
      auto* counters = static_cast<unsigned*>(counters_.handle());
      bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
      if (width_ == V && aligned) {
        cols_chunked<T, Op, kColsBlock, V><<<grid, kColsBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, chunk_rows_, partials, counters, out, idx);
      } else {
        dim3 narrow(static_cast<unsigned>(ceil_div(s.cols, kColsBlock)),
                    static_cast<unsigned>(chunks_));
        cols_chunked<T, Op, kColsBlock, 1><<<narrow, kColsBlock, 0, stream>>>(
            x, s.rows, s.cols, s.row_stride, chunk_rows_, partials, counters, out, idx);
      }
      check_launch("cols_chunked");
    }
  }

 private:
  // The grid of rows_by_block: reduce.fast.rows_blocks_per_cu blocks per SM as far as
  // occupancy allows, each taking the same number of rows; 0 launches one block per row.
  static int rows_grid(const DeviceInfo& info, std::int64_t rows) {
    int per_cu = tuning(info, "reduce.fast.rows_blocks_per_cu", 0);
    if (per_cu <= 0) return static_cast<int>(std::min<std::int64_t>(rows, 1 << 30));
    int resident = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, rows_by_block<T, Op, kRowsBlock, true>, kRowsBlock, 0));
    std::int64_t fill = static_cast<std::int64_t>(std::max(info.compute_units, 1)) *
                        std::clamp(resident, 1, per_cu);
    std::int64_t per_block = ceil_div(rows, fill);
    return static_cast<int>(ceil_div(rows, per_block));
  }

  FastPlan plan_;  // axis all
  int rows_grid_ = 1;
  int width_ = 1;
  std::int64_t col_tiles_ = 1, chunks_ = 1, chunk_rows_ = 1;
  Buffer partials_, counters_;
};

template <template <class, class> class Kernel>
std::unique_ptr<ReduceKernel> make(const Device& d, const ReduceShape& s) {
  return visit_dtype(s.dtype, [&](auto t) -> std::unique_ptr<ReduceKernel> {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, std::uint16_t>) {
      throw_invalid("reduce does not take uint16 input");
    } else {
      return visit_reduce_op<T>(s.op, [&](auto op) -> std::unique_ptr<ReduceKernel> {
        return std::make_unique<Kernel<T, decltype(op)>>(d, s);
      });
    }
  });
}

bool all_axis_only(const ReduceShape& s, const DeviceInfo&) {
  return s.axis == Axis::all;
}
bool everything(const ReduceShape&, const DeviceInfo&) {
  return true;
}

// Atomics need an accumulator of 4 or 8 bytes and an op without an index.
bool atomic_supports(const ReduceShape& s, const DeviceInfo&) {
  if (s.axis != Axis::all || is_arg_op(s.op)) return false;
  bool narrow = s.dtype == DType::uint8 && (s.op == ReduceOp::min || s.op == ReduceOp::max);
  return !narrow;
}

VariantInfo cuda_info(const char* name, const char* idea, std::string params, const char* limits,
                      bool deterministic = true) {
  return variant_info("reduce", Backend::cuda, name, idea, std::move(params), limits,
                      deterministic);
}

}  // namespace

std::vector<ReduceVariant> cuda_reduce_variants() {
  return {
      {cuda_info("tree",
                 "one element per thread, halving tree in shared memory, host loop of passes",
                 "block=256", "axis all"),
       all_axis_only, make<TreeReduce>},
      {cuda_info("serial",
                 "each thread folds its own block serially (uncoalesced), host loop of passes",
                 "block=256 items=64", "axis all"),
       all_axis_only, make<SerialReduce>},
      {cuda_info("gridstride",
                 "registers over a grid-stride loop, shared-memory tree, partials, second launch",
                 "block=256 blocks/SM=8", "axis all"),
       all_axis_only, make<GridStrideReduce>},
      {cuda_info("atomic", "one pass, block results combined with atomicAdd / compare-and-swap",
                 "block=256 blocks/SM=8",
                 "axis all; sum, prod, min, max (not uint8 min/max, no arg ops)", false),
       atomic_supports, make<AtomicReduce>},
      {cuda_info(
           "fast", "16-byte loads x8 in flight, shuffles, one launch finished by the last block",
           "block=512 blocks/SM=4; small inputs: block=256 items=2, one block up to 32 KiB", ""),
       everything, make<FastReduce>},
  };
}

}  // namespace parpat::detail

namespace parpat::cuda {

void reduce(const void* d_in, DType dtype, std::int64_t n, ReduceOp op, void* d_value,
            std::int64_t* d_index, void* d_workspace, std::size_t& workspace_bytes,
            cudaStream_t stream) {
  using namespace parpat::detail;
  int ordinal = 0;
  PARPAT_CUDA(cudaGetDevice(&ordinal));
  // Device properties are slow to query: read them once, not on every call.
  static const std::vector<DeviceInfo> devices = discover_cuda();
  if (ordinal < 0 || ordinal >= static_cast<int>(devices.size()))
    throw_invalid("the current CUDA device is not one parpat found");
  const DeviceInfo& info = devices[ordinal];
  if (n == 0 && op != ReduceOp::sum && op != ReduceOp::prod)
    throw_invalid(std::string(reduce_op_name(op)) + " of an empty array has no identity");
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, std::uint16_t>) {
      throw_invalid("reduce does not take uint16 input");
    } else {
      visit_reduce_op<T>(op, [&](auto o) {
        using Op = decltype(o);
        using Acc = typename Op::Acc;
        FastPlan plan = fast_plan<T, Op>(info, n);
        plan_for_device<T, Op>(plan, info, n, ordinal);
        // The ticket counter first, at the same place for every call, so that a workspace
        // serves calls of any size in turn: the last block of each call leaves it zeroed. The
        // partials follow; each call writes its own before it reads them.
        constexpr std::size_t partials_at = 256;
        std::size_t need = partials_at + plan.grid * sizeof(Acc);
        if (!d_workspace) {
          workspace_bytes = need;
          return;
        }
        if (workspace_bytes < need) throw_invalid("reduce workspace is too small");
        if (n == 0) {
          typename Op::Result v = Op::result(Op::identity());
          PARPAT_CUDA(cudaMemcpyAsync(d_value, &v, sizeof v, cudaMemcpyHostToDevice, stream));
          PARPAT_CUDA(cudaStreamSynchronize(stream));
          return;
        }
        auto* base = static_cast<unsigned char*>(d_workspace);
        auto addr = reinterpret_cast<std::uintptr_t>(d_in);
        std::int64_t head = std::min<std::int64_t>(n, ((16 - addr % 16) % 16) / sizeof(T));
        launch_fast_all<T, Op>(plan, stream, static_cast<const T*>(d_in), n, head,
                               reinterpret_cast<Acc*>(base + partials_at),
                               reinterpret_cast<unsigned*>(base),
                               static_cast<typename Op::Result*>(d_value), d_index);
      });
    }
  });
}

}  // namespace parpat::cuda
