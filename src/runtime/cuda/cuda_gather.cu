// The strided gather on CUDA (strided_gather.hpp). One thread per output element, in a
// grid-stride loop: output index o is split into coordinates from the last axis (o mod shape,
// then o / shape; the outermost coordinate is what remains, no division) and the input offset
// is Σ coordinate · stride. Consecutive threads write consecutive outputs, so the writes
// coalesce; the reads coalesce as far as the last output axis is also the input's innermost
// (reduce lays its gathers out so that it is). Items are copied as unsigned integers of their
// width, so one kernel serves every dtype.
#include <algorithm>
#include <memory>

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
    for (int d = g.ndim - 1; d > 0; --d) {
      offset += (rest % g.shape[d]) * g.strides[d];
      rest /= g.shape[d];
    }
    dst[o] = src[offset + rest * g.strides[0]];
  }
}

template <class Item>
class CudaGather final : public Gather {
 public:
  CudaGather(CudaDevice& cuda, const GatherLayout& layout)
      : cuda_(cuda), n_(layout.elements()), args_{layout.ndim, {}, {}} {
    for (int d = 0; d < layout.ndim; ++d) {
      args_.shape[d] = layout.shape[static_cast<std::size_t>(d)];
      args_.strides[d] = layout.strides[static_cast<std::size_t>(d)];
    }
    constexpr long long kMostBlocksPerSm = 32;
    blocks_ = static_cast<unsigned>(
        std::min((n_ + kBlock - 1) / kBlock,
                 static_cast<long long>(cuda.props().multiProcessorCount) * kMostBlocksPerSm));
  }

  void run(const void* src, void* dst) override {
    if (n_ == 0) return;
    cuda_.activate();
    gather_kernel<Item><<<blocks_, kBlock, 0, cuda_.stream()>>>(static_cast<const Item*>(src),
                                                                static_cast<Item*>(dst), args_, n_);
    check_launch("gather_kernel");
  }

 private:
  static constexpr int kBlock = 256;
  CudaDevice& cuda_;
  long long n_;
  GatherArgs args_;
  unsigned blocks_ = 0;
};

}  // namespace

std::unique_ptr<Gather> CudaDevice::make_gather(const GatherLayout& layout,
                                                std::size_t item_bytes) {
  switch (item_bytes) {
    case 1:
      return std::make_unique<CudaGather<unsigned char>>(*this, layout);
    case 2:
      return std::make_unique<CudaGather<unsigned short>>(*this, layout);
    case 4:
      return std::make_unique<CudaGather<unsigned int>>(*this, layout);
    case 8:
      return std::make_unique<CudaGather<unsigned long long>>(*this, layout);
    default:
      throw Error(ErrorKind::invalid_argument,
                  "gather takes items of 1, 2, 4 or 8 bytes, not " + std::to_string(item_bytes));
  }
}

}  // namespace parpat::detail
