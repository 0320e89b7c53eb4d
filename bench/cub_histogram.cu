// CUB's DeviceHistogram::HistogramEven as the baseline of `parpat bench histogram`: 32-bit
// counters, levels in the sample type for floats and int for integer samples (its fast
// configuration), temporary storage allocated once outside the timing and reported.
#include <cub/device/device_histogram.cuh>

#include <type_traits>

#include "bench.hpp"
#include "cub_baselines.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::bench {

double cub_histogram_even_ms(const Device& device, DType dtype, std::int64_t bins, double lo,
                             double hi, const std::vector<Array>& inputs, int reps,
                             std::size_t& temp_bytes) {
  auto& cuda = detail::backend_cast<detail::CudaDevice>(device);
  cuda.activate();
  temp_bytes = 0;
  if (inputs.empty() || bins + 1 > (std::int64_t{1} << 30)) return 0;
  if (dtype == DType::float16 || dtype == DType::bfloat16) return 0;  // CUB takes neither
  return visit_dtype(dtype, [&](auto t) -> double {
    using T = std::conditional_t<is_float16_type<decltype(t)>, float, decltype(t)>;
    using Level = std::conditional_t<std::is_floating_point_v<T>, T, int>;
    const int levels = static_cast<int>(bins + 1);
    const auto n = static_cast<int>(std::min<std::int64_t>(inputs[0].size(), INT32_MAX));
    unsigned* counts = nullptr;
    if (cudaMalloc(&counts, static_cast<std::size_t>(bins) * sizeof(unsigned)) != cudaSuccess) {
      cudaGetLastError();
      return 0.0;
    }
    std::size_t bytes = 0;
    cub::DeviceHistogram::HistogramEven(nullptr, bytes, static_cast<const T*>(nullptr), counts,
                                        levels, static_cast<Level>(lo), static_cast<Level>(hi), n,
                                        cuda.stream());
    void* temp = nullptr;
    if (cudaMalloc(&temp, std::max<std::size_t>(bytes, 1)) != cudaSuccess) {
      cudaGetLastError();  // CUB needs more temporary memory than the device has
      cudaFree(counts);
      temp_bytes = bytes;
      return 0.0;
    }
    temp_bytes = bytes;
    double ms = median_time_ms(
        device,
        [&](int rep) {
          const auto* in = static_cast<const T*>(inputs[rep % inputs.size()].buffer().handle());
          cub::DeviceHistogram::HistogramEven(temp, bytes, in, counts, levels,
                                              static_cast<Level>(lo), static_cast<Level>(hi), n,
                                              cuda.stream());
        },
        reps);
    PARPAT_CUDA(cudaStreamSynchronize(cuda.stream()));
    cudaFree(temp);
    cudaFree(counts);
    return ms;
  });
}

}  // namespace parpat::bench
