// 16-byte vector loads through the read-only path, and element access of a strided matrix seen
// as one flat array. Shared by the CUDA kernels that stream their input.
#pragma once

#include <cstdint>

namespace parpat::detail {

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
}  // namespace parpat::detail
