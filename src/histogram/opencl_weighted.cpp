// OpenCL weighted histograms (histogram_weighted.cl): `interleaved` with one global float64 add
// per value, `fast` with runs of equal slots summed in registers and lane-striped float64 sums
// per slot in local memory (global sums when the slots do not fit). Values find their slots with
// the counting kernels' rules (ClBinRule). Float64 atomic adds are compare-and-swap loops (the
// hardware's float64 reductions through inline PTX on NVIDIA), so the device needs cl_khr_fp64
// and cl_khr_int64_base_atomics.
#include <algorithm>
#include <string>

#include "histogram/histogram_internal.hpp"
#include "histogram/opencl_rule.hpp"
#include "histogram/tuning.hpp"

extern const char* const parpat_cl_histogram_rules;
extern const char* const parpat_cl_histogram_add_f64;
extern const char* const parpat_cl_histogram_weighted;

namespace parpat::detail {

namespace {

class OpenclWeightedHistogram final : public WeightedHistogramKernel {
 public:
  OpenclWeightedHistogram(const Device& d, const HistogramProblem& p, bool fast)
      : cl_(backend_cast<OpenclDevice>(d)), p_(p), fast_(fast), rule_(d, p, fast, false) {
    const auto& info = d.info();
    if (!info.fp64 || !info.int64_atomics)
      throw Error(ErrorKind::unsupported,
                  "weighted histograms on OpenCL need cl_khr_fp64 and cl_khr_int64_base_atomics, "
                  "which " +
                      info.name + " lacks");
    const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(info);
    // As many striped copies of the sums (a power of two, up to 32) as striped_kib allows, in
    // at most 48 KiB (NVIDIA's limit per group under OpenCL).
    const std::size_t budget = std::min<std::uint64_t>(
        {std::uint64_t(policy.striped_kib) << 10, info.local_memory, 48u << 10});
    const std::size_t row = std::size_t(p.slots()) * sizeof(double);
    const bool local_sums = fast && row <= budget;
    std::size_t columns = 1;
    while (local_sums && columns < 32 && int(columns * 2) <= policy.max_columns &&
           row * columns * 2 <= budget)
      columns *= 2;
    local_bytes_ = local_sums ? row * columns : 0;
    std::string options =
        rule_.options() + " -DW=" + (p.weights == DType::float32 ? "float" : "double") +
        " -DCOLUMNS=" + std::to_string(columns) + " -DLOCAL_SUMS=" + (local_sums ? "1" : "0");
    if (info.vendor.find("NVIDIA") != std::string::npos && tuned<HistogramOpenclPolicy>(info).ptx)
      options += " -DNVIDIA_PTX=1";
    static const std::string source = std::string(parpat_cl_histogram_rules) +
                                      parpat_cl_histogram_add_f64 + parpat_cl_histogram_weighted;
    kernel_ = cl_.kernel("histogram_weighted.cl", source, options,
                         fast ? "weighted_fast" : "weighted_interleaved");
    local_size_ = group_size_for(
        kernel_, cl_,
        static_cast<std::size_t>(fast ? policy.block : tuned<HistogramClassicPolicy>(info).block));
    const auto per_cu =
        static_cast<std::int64_t>(tuned<HistogramClassicPolicy>(info).groups_per_cu);
    const auto local = static_cast<std::int64_t>(local_size_);
    groups_ = static_cast<std::size_t>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(info.compute_units * per_cu, (p.n + local - 1) / local)));
  }

  void run(const Buffer& in, const Buffer& weights, const Buffer& sums, bool accumulate) override {
    try {
      cl_ulong zero = 0;  // the bits of +0.0
      if (!accumulate)
        cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(sums.handle()), true), zero, 0,
                                      static_cast<std::size_t>(p_.slots()) * 8);
      set_arg(kernel_, 0, as_mem(in.handle()));
      set_arg(kernel_, 1, static_cast<cl_long>(p_.n));
      const cl_uint i = rule_.bind(kernel_, 2);
      if (fast_)
        set_args_from(kernel_, i, as_mem(weights.handle()), static_cast<cl_uint>(p_.slots()),
                      cl::Local(std::max<std::size_t>(local_bytes_, 8)), as_mem(sums.handle()));
      else
        set_args_from(kernel_, i, as_mem(weights.handle()), as_mem(sums.handle()));
      cl_.launch(kernel_, groups_ * local_size_, local_size_);
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }

  std::size_t temp_bytes() const override { return rule_.temp_bytes(); }

 private:
  OpenclDevice& cl_;
  HistogramProblem p_;
  bool fast_;
  ClBinRule rule_;
  cl::Kernel kernel_;
  std::size_t local_bytes_ = 0, local_size_ = 256, groups_ = 1;
};

}  // namespace

std::unique_ptr<WeightedHistogramKernel> make_opencl_weighted_interleaved(
    const Device& d, const HistogramProblem& p) {
  return std::make_unique<OpenclWeightedHistogram>(d, p, false);
}

std::unique_ptr<WeightedHistogramKernel> make_opencl_weighted_fast(const Device& d,
                                                                   const HistogramProblem& p) {
  return std::make_unique<OpenclWeightedHistogram>(d, p, true);
}

}  // namespace parpat::detail
