// CUB baselines for `parpat bench reduce`: DeviceReduce (Sum, Min, Max, ArgMin, ArgMax) and
// DeviceSegmentedReduce over matrix rows, timed exactly as parpat's variants of the same case
// are (the case's CaseTimer: device events, warm-up, median, rotated inputs, one launch at a
// time or graph replays), with temporary storage allocated outside timing.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <functional>
#include <vector>

#include "bench.hpp"
#include "cub_baselines.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::bench {

bool cub_available() {
  return true;
}

namespace {

// The sum's type as parpat reports it: int64 for signed integers and bool, uint64 for unsigned.
template <class T>
using WideSum =
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_signed_v<T> || std::is_same_v<T, bool>,
                                          std::int64_t, std::uint64_t>>;

// Sizes CUB's temporary storage with a first call, then times `call(temp, bytes, input)`;
// the timed calls only launch kernels on the device's stream, so they can be captured.
double time_cub(const Device& device, const std::vector<Array>& inputs, CaseTimer& timer,
                const std::function<cudaError_t(void*, std::size_t&, const void*)>& call) {
  std::size_t bytes = 0;
  PARPAT_CUDA(call(nullptr, bytes, inputs[0].buffer().handle()));
  Buffer temp(device, std::max<std::size_t>(bytes, 1));
  return timer.time_ms([&](int rep) {
    std::size_t b = bytes;
    PARPAT_CUDA(call(temp.handle(), b, inputs[rep % inputs.size()].buffer().handle()));
  });
}

// Adds in float: CUB's sum of 16-bit floats as parpat does it (each element widened once).
struct FloatSum {
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};

// CUB over CUDA's own 16-bit floats (H: __half or __nv_bfloat16): a float sum (Reduce with
// FloatSum), and Min / Max in the 16-bit type. Other ops have no baseline.
template <class H>
double cub_half_reduce_ms(const Device& device, ReduceOp op, const std::vector<Array>& inputs,
                          CaseTimer& timer) {
  cudaStream_t stream = detail::backend_cast<detail::CudaDevice>(device).stream();
  const std::int64_t n = inputs[0].size();
  Buffer out(device, 16);
  auto* as_float = static_cast<float*>(out.handle());
  auto* as_half = static_cast<H*>(out.handle());
  switch (op) {
    case ReduceOp::sum:
      return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
        return cub::DeviceReduce::Reduce(tmp, b, static_cast<const H*>(in), as_float, n, FloatSum{},
                                         0.0f, stream);
      });
    case ReduceOp::min:
      return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
        return cub::DeviceReduce::Min(tmp, b, static_cast<const H*>(in), as_half, n, stream);
      });
    case ReduceOp::max:
      return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
        return cub::DeviceReduce::Max(tmp, b, static_cast<const H*>(in), as_half, n, stream);
      });
    default:
      return 0.0;
  }
}

}  // namespace

double cub_reduce_ms(const Device& device, DType dtype, ReduceOp op,
                     const std::vector<Array>& inputs, CaseTimer& timer) {
  auto& cuda = detail::backend_cast<detail::CudaDevice>(device);
  cudaStream_t stream = cuda.stream();
  std::int64_t n = inputs[0].size();
  Buffer out(device, 16), index(device, 8);
  if (dtype == DType::float16) return cub_half_reduce_ms<__half>(device, op, inputs, timer);
  if (dtype == DType::bfloat16) return cub_half_reduce_ms<__nv_bfloat16>(device, op, inputs, timer);
  return visit_dtype(dtype, [&](auto t) -> double {
    using T = std::conditional_t<is_float16_type<decltype(t)>, float, decltype(t)>;
    auto* o = static_cast<T*>(out.handle());
    auto* i = static_cast<std::int64_t*>(index.handle());
    switch (op) {
      case ReduceOp::sum:
        return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
          return cub::DeviceReduce::Sum(tmp, b, static_cast<const T*>(in),
                                        static_cast<WideSum<T>*>(out.handle()), n, stream);
        });
      case ReduceOp::min:
        return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
          return cub::DeviceReduce::Min(tmp, b, static_cast<const T*>(in), o, n, stream);
        });
      case ReduceOp::max:
        return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
          return cub::DeviceReduce::Max(tmp, b, static_cast<const T*>(in), o, n, stream);
        });
      case ReduceOp::argmin:
        return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
          return cub::DeviceReduce::ArgMin(tmp, b, static_cast<const T*>(in), o, i, n, stream);
        });
      case ReduceOp::argmax:
        return time_cub(device, inputs, timer, [&](void* tmp, std::size_t& b, const void* in) {
          return cub::DeviceReduce::ArgMax(tmp, b, static_cast<const T*>(in), o, i, n, stream);
        });
      default:
        return 0.0;
    }
  });
}

double cub_segmented_reduce_ms(const Device& device, DType dtype, ReduceOp op, const Array& input,
                               CaseTimer& timer) {
  if (op != ReduceOp::sum || input.row_stride() != input.cols()) return 0;
  auto& cuda = detail::backend_cast<detail::CudaDevice>(device);
  cudaStream_t stream = cuda.stream();
  std::int64_t rows = input.rows(), cols = input.cols();
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(rows + 1));
  for (std::int64_t r = 0; r <= rows; ++r)
    offsets[r] = r * cols;
  Buffer d_offsets(device, offsets.size() * sizeof(std::int64_t));
  d_offsets.upload(offsets.data(), d_offsets.bytes());
  const auto* begin = static_cast<const std::int64_t*>(d_offsets.handle());
  if (dtype == DType::float16 || dtype == DType::bfloat16) return 0;  // CUB takes neither
  return visit_dtype(dtype, [&](auto t) -> double {
    using T = std::conditional_t<is_float16_type<decltype(t)>, float, decltype(t)>;
    Buffer out(device, rows * sizeof(WideSum<T>));
    std::vector<Array> one{input};
    return time_cub(device, one, timer, [&](void* tmp, std::size_t& b, const void* in) {
      return cub::DeviceSegmentedReduce::Sum(tmp, b, static_cast<const T*>(in),
                                             static_cast<WideSum<T>*>(out.handle()), rows, begin,
                                             begin + 1, stream);
    });
  });
}

}  // namespace parpat::bench
