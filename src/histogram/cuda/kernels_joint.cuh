// CUDA joint histogram kernels (numpy.histogramdd). A sample's slot is the C-order index of its
// coordinates' bins, each found by the one-dimensional rules (rules.cuh): for float32 with even
// bins the float rule (float arithmetic, exact through its error bound, a value near an edge
// settled against the float64 edges), else the float64 even rule or a binary search over explicit
// edges. A sample with a coordinate outside its range or NaN goes to the last slot.
//  - joint_count_kernel: 2-D samples of 4- and 8-byte types (kPair) are read as 16-byte vectors,
//    two to a unit of 16 / sizeof(T) samples (an (N, 2) array's unit is two consecutive vectors,
//    two arrays' unit one vector of each), two units a thread counted while its next two load;
//    other samples one coordinate at a time in a grid-stride loop. Counts go to a sink of
//    sinks.cuh: lane-striped 32-bit shared counters, packed 16-bit shared counters with exact
//    carries (65536 bins and a few more fit in one block's shared memory) or the 64-bit global
//    counts. With `vote` (sinks whose lanes share counters), a unit whose first slot ≥ 8 lanes
//    share goes through per-thread runs of equal slots, so skewed data costs one add per run.
//  - joint_weighted_kernel: the float64 weights of a grid-stride loop's samples summed per run of
//    equal slots in a register, then into lane-striped float64 shared sums (kShared) or the global
//    sums.
#pragma once

#include "histogram/cuda/kernels_weighted.cuh"
#include "histogram/cuda/sinks.cuh"
#include "parpat/histogramdd.hpp"

namespace parpat::detail {
// Private to histogram/cuda_joint.cu, the one file that includes it.
namespace {

// One dimension's bins: the float rule where `quick.usable` (float32 with even bins), the float64
// even rule, or explicit edges where `edges` is set.
struct JointAxisDevice {
  FloatEvenRule quick;
  EvenRuleDevice even;
  const double* edges = nullptr;
  unsigned bins = 0;

  template <class T>
  __device__ unsigned bin(T value) const {
    if constexpr (std::is_same_v<T, float>) {
      if (quick.usable) {
        bool exact = true;
        const unsigned s = quick.quick(value, exact);
        return exact ? s : even.settle(double(value), min((long long)s, even.bins - 1));
      }
    }
    if (edges) return EdgesRuleDevice{edges, bins}.slot(value);
    return even.slot(value);
  }
};

// The samples and their bins. Coordinate d of sample i: coords[0][i·dims + d] when interleaved,
// else coords[d][i].
template <class T>
struct JointSamples {
  const T* coords[kMaxHistogramDims];
  JointAxisDevice axes[kMaxHistogramDims];
  int dims;
  bool interleaved;
  long long n;
  unsigned outside;  // the slot of samples in no bin: the bin count

  __device__ T at(long long i, int d) const {
    return interleaved ? coords[0][i * dims + d] : coords[d][i];
  }
  // The slot of a 2-D sample.
  __device__ unsigned pair_slot(T x, T y) const {
    const unsigned bx = axes[0].bin(x), by = axes[1].bin(y);
    return bx < axes[0].bins && by < axes[1].bins ? bx * axes[1].bins + by : outside;
  }
  __device__ unsigned slot_at(long long i) const {
    unsigned s = 0;
    bool inside = true;
    for (int d = 0; d < dims; ++d) {
      const unsigned b = axes[d].bin(at(i, d));
      inside &= b < axes[d].bins;
      s = s * axes[d].bins + b;
    }
    return inside ? s : outside;
  }
};

// Adds the slots of one unit to the sink: through per-thread runs where the warp votes that the
// data is skewed, else one add each.
template <class Sink, int K>
__device__ void add_unit(const Sink& sink, Run<Sink>& run, const unsigned (&slots)[K], bool valid,
                         bool vote) {
  const unsigned leader = __shfl_sync(0xFFFFFFFFu, slots[0], 0);
  const bool skewed = vote && __popc(__ballot_sync(0xFFFFFFFFu, valid && slots[0] == leader)) >= 8;
  if (!valid) return;
  if (skewed) {
#pragma unroll
    for (int k = 0; k < K; ++k)
      run.add(slots[k], 1, sink);
  } else {
    add_ones(sink, slots);
  }
}

// Counts 2-D samples [0, units · kVec) as 16-byte vectors; returns the first sample not counted.
template <class T, class Sink>
__device__ long long count_pairs(const JointSamples<T>& in, const Sink& sink, Run<Sink>& run,
                                 bool vote) {
  constexpr int kVec = 16 / sizeof(T);
  constexpr int kUnits = 2;
  const long long units = in.n / kVec;
  const uint4* first = reinterpret_cast<const uint4*>(in.coords[0]);
  const uint4* second = reinterpret_cast<const uint4*>(in.coords[1]);
  const long long warps = (long long)gridDim.x * (blockDim.x / 32);
  const long long warp = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  auto load = [&](uint4(&raw)[kUnits][2], long long base) {
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      const long long unit = base + u * 32 + lane;
      const bool valid = unit < units;
      raw[u][0] =
          valid ? __ldcs(in.interleaved ? first + 2 * unit : first + unit) : make_uint4(0, 0, 0, 0);
      raw[u][1] = valid ? __ldcs(in.interleaved ? first + 2 * unit + 1 : second + unit)
                        : make_uint4(0, 0, 0, 0);
    }
  };
  // The next round's units load before this round is counted.
  const long long stride = warps * 32 * kUnits;
  uint4 next[kUnits][2];
  load(next, warp * 32 * kUnits);
  for (long long base = warp * 32 * kUnits; base < units; base += stride) {
    uint4 raw[kUnits][2];
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      raw[u][0] = next[u][0];
      raw[u][1] = next[u][1];
    }
    if (base + stride < units) load(next, base + stride);
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      T values[2][kVec];
      memcpy(values, raw[u], sizeof values);
      unsigned slots[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        // (N, 2): sample k's coordinates are elements 2k and 2k + 1 of the unit's two vectors.
        slots[k] = in.pair_slot(
            in.interleaved ? values[(2 * k) / kVec][(2 * k) % kVec] : values[0][k],
            in.interleaved ? values[(2 * k + 1) / kVec][(2 * k + 1) % kVec] : values[1][k]);
      }
      add_unit(sink, run, slots, base + u * 32 + lane < units, vote);
    }
  }
  return units * kVec;
}

// Counts samples [begin, n) one coordinate at a time, grid-stride.
template <class T, class Sink>
__device__ void count_samples(const JointSamples<T>& in, long long begin, const Sink& sink,
                              Run<Sink>& run) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = begin + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < in.n;
       i += stride)
    run.add(in.slot_at(i), 1, sink);
}

template <class T, class Sink>
__device__ void count_joint(const JointSamples<T>& in, bool pairs, const Sink& sink, bool vote) {
  Run<Sink> run(kNone);
  long long done = 0;
  if constexpr (sizeof(T) >= 4) {
    if (pairs) done = count_pairs(in, sink, run, vote);
  }
  count_samples(in, done, sink, run);
  run.flush(sink);
}

enum class JointSink { striped, packed, global };

// Counts into a shared histogram of `slots` rows (lane-striped over `columns`, rows in order: the
// bins of two coordinates seldom crowd rows a power of two apart; or packed), then adds each row
// to the 64-bit counts; or (global) into the counts directly.
template <class T, JointSink kSink>
__global__ void joint_count_kernel(JointSamples<T> in, bool pairs, unsigned slots, unsigned columns,
                                   bool vote, unsigned long long* counts) {
  if constexpr (kSink == JointSink::global) {
    count_joint(in, pairs, GlobalSink{counts, kNone, RowSlots{}}, true);
  } else {
    extern __shared__ unsigned hist[];
    constexpr bool kPacked = kSink == JointSink::packed;
    const StripedRows rows(kPacked ? 1 : columns, RowOrder::in_order);
    const unsigned words = kPacked ? (slots + 1) / 2 : slots * columns;
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x)
      hist[i] = 0;
    __syncthreads();
    if constexpr (kPacked) {
      count_joint(in, pairs, PackedSink(hist, counts, 0, slots, RowSlots{}), vote);
    } else {
      count_joint(in, pairs,
                  StripedSink<RowOrder::in_order>(hist, rows, threadIdx.x % 32 % columns), vote);
    }
    __syncthreads();
    for (unsigned r = threadIdx.x; r < slots; r += blockDim.x) {
      const unsigned long long count = shared_row_count<kPacked>(hist, r, rows);
      if (count) atomicAdd(counts + r, count);
    }
  }
}

template <class T, bool kShared>
__global__ void joint_weighted_kernel(JointSamples<T> in, const void* weights, bool float_weights,
                                      unsigned slots, unsigned columns, double* sums) {
  extern __shared__ double part[];
  const BlockSums<kShared> block(part, sums, slots, columns);
  WeightRun run;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < in.n; i += stride) {
    const double w = float_weights ? double(__ldcs(static_cast<const float*>(weights) + i))
                                   : __ldcs(static_cast<const double*>(weights) + i);
    run.add(in.slot_at(i), w, block);
  }
  block.finish(run);
}

}  // namespace
}  // namespace parpat::detail
