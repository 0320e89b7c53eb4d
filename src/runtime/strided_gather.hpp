// The strided gather: a copy of an N-D strided view of a buffer into dense C order. Reduce uses
// it to bring the axes it folds next to each other ([kept..., reduced...] or [reduced...,
// kept...]) when they are interleaved with the axes it keeps; each backend implements it once
// (cpu_gather.cpp, cuda_gather.cu, opencl_gather.cpp with gather.cl).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace parpat::detail {

constexpr int kMaxGatherDims = 16;

// Output element (c_0, ..., c_{ndim-1}) of the dense C-order array of `shape` is the input
// element at Σ c_i · strides[i] (strides in elements, ≥ 0).
struct GatherLayout {
  int ndim = 0;
  std::array<std::int64_t, kMaxGatherDims> shape{}, strides{};

  std::int64_t elements() const {
    std::int64_t n = 1;
    for (int d = 0; d < ndim; ++d)
      n *= shape[static_cast<std::size_t>(d)];
    return n;
  }
};

// A gather bound to one layout and item width (1, 2, 4 or 8 bytes), made once by a plan
// (DeviceImpl::make_gather): run() enqueues the copy of device memory `src` into `dst` (which
// holds layout.elements() items and does not overlap `src`) on the calling thread's stream or
// queue, and allocates nothing.
class Gather {
 public:
  virtual ~Gather() = default;
  virtual void run(const void* src, void* dst) = 0;
};

}  // namespace parpat::detail
