// CUDA weighted histograms (kernels_weighted.cuh): `interleaved` with one global float64 atomic
// per value, `fast` with runs of equal slots summed in registers and lane-striped float64 sums
// per slot in shared memory. Values find their slots with the counting kernels' rules: the
// bits → slot table of 1- and 2-byte input, the float32 even rule of `fast` (float arithmetic,
// exact), the even rule in float64, or a binary search over explicit edges.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "histogram/cuda/kernels_weighted.cuh"
#include "histogram/histogram_internal.hpp"
#include "histogram/tuning.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

namespace {

template <class T, class W>
class CudaWeightedHistogram final : public WeightedHistogramKernel {
 public:
  CudaWeightedHistogram(const Device& d, const HistogramProblem& p, bool fast)
      : cuda_(backend_cast<CudaDevice>(d)), p_(p), fast_(fast) {
    cuda_.activate();
    if constexpr (sizeof(T) <= 2) {
      const auto table = slot_table(p);
      aux_ = Buffer(d, table.size() * sizeof(unsigned));
      aux_.upload(table.data(), aux_.bytes());
    } else if (!p.even) {
      aux_ = Buffer(d, p.edges.size() * sizeof(double));
      aux_.upload(p.edges.data(), aux_.bytes());
    } else if (std::is_same_v<T, float> && fast) {
      float_rule_ = FloatEvenRule(p, kIeeeSubnormals);
    }
    const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(d.info());
    block_ = fast ? policy.block : tuned<HistogramClassicPolicy>(d.info()).block;
    // As many striped copies of the sums (a power of two, up to 32) as striped_kib allows.
    const std::size_t budget =
        std::min<std::size_t>(std::size_t(policy.striped_kib) << 10, d.info().local_memory);
    const std::size_t row = std::size_t(p.slots()) * sizeof(double);
    shared_sums_ = fast && row <= budget;
    while (shared_sums_ && columns_ < 32 && int(columns_ * 2) <= policy.max_columns &&
           row * columns_ * 2 <= budget)
      columns_ *= 2;
    shared_ = shared_sums_ ? row * columns_ : 0;
    with_rule([&](auto rule) { configure(rule, d.info().compute_units); });
  }

  void run(const Buffer& in, const Buffer& weights, const Buffer& sums, bool accumulate) override {
    cuda_.activate();
    auto* out = static_cast<double*>(sums.handle());
    if (!accumulate)
      PARPAT_CUDA(cudaMemsetAsync(out, 0, std::size_t(p_.slots()) * 8, cuda_.stream()));
    const T* x = static_cast<const T*>(in.handle());
    const W* w = static_cast<const W*>(weights.handle());
    with_rule([&](auto rule) { launch(x, w, rule, out); });
  }

  std::size_t temp_bytes() const override { return aux_.bytes(); }

 private:
  template <class F>
  void with_rule(F f) {
    with_slot_rule<T>(p_, float_rule_, aux_.handle(), f);
  }

  template <class Rule>
  const void* kernel() const {
    if (!fast_) return reinterpret_cast<const void*>(&weighted_interleaved_kernel<T, W, Rule>);
    return shared_sums_ ? reinterpret_cast<const void*>(&weighted_fast_kernel<T, W, Rule, true>)
                        : reinterpret_cast<const void*>(&weighted_fast_kernel<T, W, Rule, false>);
  }

  template <class Rule>
  void configure(Rule, int sms) {
    const void* k = kernel<Rule>();
    if (shared_ > (48u << 10))
      PARPAT_CUDA(
          cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_)));
    cudaFuncAttributes attr{};
    PARPAT_CUDA(cudaFuncGetAttributes(&attr, k));
    block_ = std::min(block_, attr.maxThreadsPerBlock) / 32 * 32;
    int per_sm = 0;
    PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, block_, shared_));
    const long long most = (p_.n + block_ - 1) / block_;
    blocks_ = int(std::max(1ll, std::min((long long)std::max(per_sm, 1) * sms, most)));
  }

  template <class Rule>
  void launch(const T* x, const W* w, Rule rule, double* out) {
    cudaStream_t st = cuda_.stream();
    if (!fast_) {
      weighted_interleaved_kernel<T, W, Rule><<<blocks_, block_, 0, st>>>(x, w, p_.n, rule, out);
    } else if (shared_sums_) {
      weighted_fast_kernel<T, W, Rule, true>
          <<<blocks_, block_, shared_, st>>>(x, w, p_.n, rule, unsigned(p_.slots()), columns_, out);
    } else {
      weighted_fast_kernel<T, W, Rule, false>
          <<<blocks_, block_, 0, st>>>(x, w, p_.n, rule, unsigned(p_.slots()), 1, out);
    }
    check_launch("weighted histogram kernel");
  }

  CudaDevice& cuda_;
  HistogramProblem p_;
  bool fast_;
  Buffer aux_;  // bits → slot table (1- and 2-byte input) or explicit edges
  FloatEvenRule float_rule_;
  bool shared_sums_ = false;
  unsigned columns_ = 1;
  std::size_t shared_ = 0;
  int block_ = 256, blocks_ = 1;
};

std::unique_ptr<WeightedHistogramKernel> make(const Device& d, const HistogramProblem& p,
                                              bool fast) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<WeightedHistogramKernel> {
    using T = kernel_element_t<decltype(t)>;
    if (p.weights == DType::float32)
      return std::make_unique<CudaWeightedHistogram<T, float>>(d, p, fast);
    return std::make_unique<CudaWeightedHistogram<T, double>>(d, p, fast);
  });
}

}  // namespace

std::unique_ptr<WeightedHistogramKernel> make_cuda_weighted_interleaved(const Device& d,
                                                                        const HistogramProblem& p) {
  return make(d, p, false);
}

std::unique_ptr<WeightedHistogramKernel> make_cuda_weighted_fast(const Device& d,
                                                                 const HistogramProblem& p) {
  return make(d, p, true);
}

}  // namespace parpat::detail
