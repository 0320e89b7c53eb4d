// Launching spinning kernels safely on CUDA: cluster sizes, the largest co-resident grid
// (occupancy, clustered or not) and the cooperative launch that guarantees every block is
// resident, or a refusal naming the largest safe grid.
#pragma once

#include <algorithm>
#include "barrier/barrier_internal.hpp"
#include "barrier/cuda/words.cuh"
#include "barrier/tuning.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

// ---------------------------------------------------------------------------------------------
// Host side.

// The tuned largest cluster size (a power of two, 1..16: the policy's limits refuse others).
int largest_cluster(const DeviceInfo& info) {
  return tuned<BarrierHierarchicalPolicy>(info).cluster;
}

// The cluster size for `groups` blocks: the largest power of two up to the tuned maximum that
// divides the grid.
int cluster_size(const DeviceInfo& info, int groups) {
  int size = largest_cluster(info);
  while (size > 1 && groups % size != 0)
    size /= 2;
  return size;
}

// Clusters above 8 blocks are not portable: the kernel must opt in before any query or launch.
template <class... Params>
void allow_cluster(void (*kernel)(Params...), int cluster) {
  if (cluster > 8)
    PARPAT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

// Whether cooperative and cluster launch combine on this driver: -1 unknown, 0 no, 1 yes.
std::atomic<int> cooperative_clusters{-1};

cudaLaunchConfig_t launch_config(CudaDevice& cuda, int groups, int group_size, int cluster,
                                 bool cooperative, cudaLaunchAttribute* attrs) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(groups);
  config.blockDim = dim3(group_size);
  config.stream = cuda.stream();
  config.attrs = attrs;
  config.numAttrs = 0;
  if (cooperative) {
    attrs[config.numAttrs].id = cudaLaunchAttributeCooperative;
    attrs[config.numAttrs].val.cooperative = 1;
    ++config.numAttrs;
  }
  if (cluster > 0) {
    attrs[config.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attrs[config.numAttrs].val.clusterDim.x = cluster;
    attrs[config.numAttrs].val.clusterDim.y = 1;
    attrs[config.numAttrs].val.clusterDim.z = 1;
    ++config.numAttrs;
  }
  return config;
}

// The largest co-resident grid of `kernel` with `group_size` threads (clustered when
// `clustered`), from the occupancy of that kernel.
template <class... Params>
int occupancy_groups(CudaDevice& cuda, void (*kernel)(Params...), int group_size, bool clustered) {
  cuda.activate();
  int per_sm = 0;
  PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, group_size, 0));
  int groups = per_sm * cuda.info().compute_units;
  if (!clustered) return groups;
  // The launch picks its cluster size from the grid, so the bound must hold for every size it
  // may pick.
  int largest = largest_cluster(cuda.info());
  allow_cluster(kernel, largest);
  for (int cluster = 1; cluster <= largest; cluster *= 2) {
    cudaLaunchAttribute attrs[2];
    cudaLaunchConfig_t config = launch_config(cuda, std::max(cluster, groups - groups % cluster),
                                              group_size, cluster, false, attrs);
    int clusters = 0;
    cudaError_t status = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw Error(ErrorKind::unsupported,
                  cuda.info().name + " cannot run clusters of " + std::to_string(cluster) +
                      " blocks of " + std::to_string(group_size) + " threads of this kernel (" +
                      cudaGetErrorString(status) +
                      "); lower the tuning value barrier.hierarchical.cluster",
                  "cuda", "cudaOccupancyMaxActiveClusters");
    }
    groups = std::min(groups, clusters * cluster);
  }
  return groups;
}

// Launches a spinning kernel so that every block is resident: cooperatively, and for the
// hierarchical method with cluster dimensions too. Where the driver refuses cooperative and
// cluster launch together, the cluster launch alone is used: the grid was already checked
// against cudaOccupancyMaxActiveClusters, so all clusters fit at once on an otherwise idle
// device.
template <class... Params, class... Args>
void launch_resident(CudaDevice& cuda, bool clustered, int groups, int group_size,
                     void (*kernel)(Params...), Args... args) {
  cuda.activate();
  int cluster = clustered ? cluster_size(cuda.info(), groups) : 0;
  allow_cluster(kernel, cluster);
  cudaLaunchAttribute attrs[2];
  bool cooperative = !clustered || cooperative_clusters.load() != 0;
  cudaLaunchConfig_t config = launch_config(cuda, groups, group_size, cluster, cooperative, attrs);
  cudaError_t status = cudaLaunchKernelEx(&config, kernel, args...);
  if (clustered && cooperative) {
    if (status == cudaSuccess) {
      cooperative_clusters.store(1);
    } else if (status != cudaErrorCooperativeLaunchTooLarge) {
      cudaGetLastError();
      cooperative_clusters.store(0);
      config = launch_config(cuda, groups, group_size, cluster, false, attrs);
      status = cudaLaunchKernelEx(&config, kernel, args...);
    }
  }
  PARPAT_CUDA(status);
  check_launch("barrier kernel");
}

enum class Method { atomic_all, representative, flags, flip, hierarchical, cg };

void require_cooperative(const Device& device) {
  if (!device.info().cooperative_launch)
    throw Error(ErrorKind::unsupported,
                device.label() +
                    " has no cooperative launch, so a grid barrier cannot be guaranteed there "
                    "(use the relaunch method)",
                "cuda", "cudaDevAttrCooperativeLaunch");
}

}  // namespace
}  // namespace parpat::detail
