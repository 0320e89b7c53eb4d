// The launch plan of CUDA reduce `fast` over contiguous elements, chosen by size (fast_plan and
// plan_for_device: one block, a small-block grid, a cluster or the bandwidth-bound wave), and the
// launch itself with its cluster and programmatic-dependent-launch attributes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>

#include "reduce/cuda/classic_plans.cuh"
#include "reduce/cuda/kernels_fast.cuh"
#include "reduce/tuning.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

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
FastPlan fast_plan(const ReduceFastPolicy& policy, const DeviceInfo& info, std::int64_t n) {
  const std::int64_t vectors = ceil_div(n, Vec16<T>::kCount);
  auto items_of = [](int items) -> std::int64_t { return std::min(items, kFastUnroll); };
  auto warps_of = [](std::int64_t threads) {
    return static_cast<int>(
        std::clamp<std::int64_t>(ceil_div(threads, kWarp) * kWarp, kWarp, kFastBlock));
  };
  auto resident_blocks = [](auto kernel, int block) {
    int resident = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, block, 0));
    return std::max(resident, 1);
  };
  if (n * static_cast<std::int64_t>(sizeof(T)) <= policy.single_block_bytes)
    return {1, warps_of(ceil_div(vectors, items_of(policy.single_block_items))), true};
  const std::int64_t cus = std::max(info.compute_units, 1);
  const std::int64_t fill =
      cus * std::min(resident_blocks(fast_all<T, Op, false>, kFastBlock), policy.blocks_per_cu);
  const std::int64_t large = ceil_div(vectors, kFastBlock * kFastUnroll);
  if (large >= fill) return {static_cast<int>(fill), kFastBlock, false};
  const int block = warps_of(policy.small_block);
  const std::int64_t wave = cus * resident_blocks(fast_all<T, Op, true>, block);
  const std::int64_t blocks = ceil_div(vectors, block * items_of(policy.small_items));
  return {static_cast<int>(std::clamp<std::int64_t>(blocks, 1, wave)), block, true};
}

// The launch attribute of a one-dimensional cluster of `size` blocks.
inline cudaLaunchAttribute cluster_of(int size) {
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
  // Function attributes and occupancy belong to the current device: make it `ordinal` here.
  int current = 0;
  PARPAT_CUDA(cudaGetDevice(&current));
  struct Restore {
    int device;
    ~Restore() { cudaSetDevice(device); }
  } restore{current};
  PARPAT_CUDA(cudaSetDevice(ordinal));
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
void plan_for_device(FastPlan& plan, const ReduceFastPolicy& policy, std::int64_t n, int ordinal) {
  int major = 0;
  PARPAT_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal));
  if (major < 9) return;
  plan.overlap_launch = policy.overlap_launch != 0;
  plan.prefetch = plan.overlap_launch && policy.prefetch != 0;
  if (!plan.small || plan.grid == 1 ||
      n * static_cast<std::int64_t>(sizeof(T)) > policy.cluster_bytes)
    return;
  int size = placeable_cluster<T, Op>(ordinal, std::min(policy.cluster_size, kMaxCluster));
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

}  // namespace parpat::detail
