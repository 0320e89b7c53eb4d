// The strided gather on CUDA (strided_gather.hpp). One thread per output element, in a
// grid-stride loop: output index o is split into coordinates from the last axis (o mod shape,
// then o / shape) and the input offset is Σ coordinate · stride. Consecutive threads write
// consecutive outputs, so the writes coalesce; the reads coalesce as far as the last output axis
// is also the input's innermost (reduce lays its gathers out so that it is). Items are copied
// as unsigned integers of their width, so one kernel serves every dtype.
#include <algorithm>

#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

namespace {

// GatherLayout as plain arrays, passed by value as a kernel argument.
struct GatherArgs {
  int ndim;
  long long shape[kMaxGatherDims], strides[kMaxGatherDims];
};

template <class Item>
__global__ void gather_kernel(const Item* __restrict__ src, Item* __restrict__ dst, GatherArgs g,
                              long long n) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long o = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; o < n;
       o += step) {
    long long rest = o, offset = 0;
    for (int d = g.ndim - 1; d >= 0; --d) {
      offset += (rest % g.shape[d]) * g.strides[d];
      rest /= g.shape[d];
    }
    dst[o] = src[offset];
  }
}

template <class Item>
void launch_gather(CudaDevice& cuda, const void* src, void* dst, const GatherArgs& g, long long n) {
  constexpr int kBlock = 256;
  const long long wanted = (n + kBlock - 1) / kBlock;
  const long long most = static_cast<long long>(cuda.props().multiProcessorCount) * 32;
  const auto blocks = static_cast<unsigned>(std::min(wanted, most));
  gather_kernel<Item><<<blocks, kBlock, 0, cuda.stream()>>>(static_cast<const Item*>(src),
                                                            static_cast<Item*>(dst), g, n);
  check_launch("gather_kernel");
}

}  // namespace

void CudaDevice::gather(const void* src, void* dst, const GatherLayout& layout,
                        std::size_t item_bytes) {
  const long long n = layout.elements();
  if (n == 0) return;
  activate();
  GatherArgs g{layout.ndim, {}, {}};
  for (int d = 0; d < layout.ndim; ++d) {
    g.shape[d] = layout.shape[static_cast<std::size_t>(d)];
    g.strides[d] = layout.strides[static_cast<std::size_t>(d)];
  }
  switch (item_bytes) {
    case 1:
      return launch_gather<unsigned char>(*this, src, dst, g, n);
    case 2:
      return launch_gather<unsigned short>(*this, src, dst, g, n);
    case 4:
      return launch_gather<unsigned int>(*this, src, dst, g, n);
    case 8:
      return launch_gather<unsigned long long>(*this, src, dst, g, n);
    default:
      throw Error(ErrorKind::invalid_argument,
                  "gather takes items of 1, 2, 4 or 8 bytes, not " + std::to_string(item_bytes));
  }
}

}  // namespace parpat::detail
