// What the stream tests (test_stream.cpp, test_stream_histogram.cpp, test_stream_sources.cpp)
// share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "parpat/reduce.hpp"
#include "test_support.hpp"

namespace parpat::test {

inline constexpr DType kHistogramTypes[] = {DType::uint8, DType::uint16, DType::int32,
                                            DType::float32, DType::float64};
// 1000 bytes: chunk boundaries inside rows of 300 or 333 elements of any dtype, and rows longer
// than a chunk; 4096: a power of two; 0: the default (one chunk for these inputs).
inline constexpr std::size_t kChunkSizes[] = {1000, 4096, 0};
inline constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::prod,   ReduceOp::min,
                                    ReduceOp::max, ReduceOp::argmin, ReduceOp::argmax};

// Whether two scalar answers are the same value of the same dtype (NaN equal to NaN).
inline bool same_scalar(const Scalar& a, const Scalar& b) {
  if (a.dtype != b.dtype) return false;
  if (is_float(a.dtype)) return (std::isnan(a.f) && std::isnan(b.f)) || a.f == b.f;
  return is_signed_integer(a.dtype) ? a.i == b.i : a.u == b.u;
}

// The chunks a stream of `bytes` makes with chunk_bytes `chunk` (rounded down to whole items).
inline std::int64_t expected_chunks(std::uint64_t bytes, std::size_t chunk, DType t) {
  const std::uint64_t c = std::max<std::uint64_t>(chunk / dtype_size(t) * dtype_size(t), 1);
  return static_cast<std::int64_t>((bytes + c - 1) / c);
}

// The bytes of a vector's elements.
template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline std::string device_test_name(const ::testing::TestParamInfo<Device>& info) {
  return device_name(info.param);
}

}  // namespace parpat::test
