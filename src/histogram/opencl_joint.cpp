// OpenCL joint histogram `fast` (histogram_joint.cl): one program per problem, built with the
// dtype, the dimension count and the layout as constants (2-D float32 samples of one array read
// two to a load). Counts go to lane-striped 32-bit
// counters in local memory (as many columns, up to 32, as histogram.fast.striped_kib allows,
// within 48 KiB, NVIDIA's limit per group) or to the 64-bit global counts; weighted sums to
// float64 local sums or the global sums (the hardware's float64 reductions through inline PTX
// on NVIDIA). Needs cl_khr_fp64 and cl_khr_int64_base_atomics.
#include <algorithm>
#include <string>

#include "histogram/joint.hpp"
#include "histogram/opencl_rule.hpp"
#include "histogram/tuning.hpp"

extern const char* const parpat_cl_histogram_add_f64;
extern const char* const parpat_cl_histogram_joint;

namespace parpat::detail {

namespace {

class OpenclJoint final : public JointKernel {
 public:
  OpenclJoint(const Device& d, const JointProblem& p)
      : device_(d), cl_(backend_cast<OpenclDevice>(d)), p_(p) {
    const auto& info = d.info();
    if (!info.fp64 || !info.int64_atomics)
      throw Error(ErrorKind::unsupported,
                  "histogramdd on OpenCL needs cl_khr_fp64 and cl_khr_int64_base_atomics, which " +
                      info.name + " lacks");
    upload_axes();
    const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(info);
    const std::size_t budget = std::min<std::uint64_t>(
        {std::uint64_t(policy.striped_kib) << 10, info.local_memory, 48u << 10});
    const std::size_t row = std::size_t(p.slots()) * (p.weighted ? 8 : 4);
    const bool local = row <= budget;
    std::size_t columns = 1;
    while (local && columns < 32 && int(columns * 2) <= policy.max_columns &&
           row * columns * 2 <= budget)
      columns *= 2;
    local_bytes_ = local ? row * columns : 0;
    std::string options =
        std::string("-DT=") + opencl_type_name(p.dtype) +
        " -DBOOL_INPUT=" + (p.dtype == DType::boolean ? "1" : "0") +
        " -DDIMS=" + std::to_string(p.dims()) + " -DINTERLEAVED=" + (p.interleaved ? "1" : "0") +
        " -DCOLUMNS=" + std::to_string(columns) + " -DLOCAL_COUNTS=" + (local ? "1" : "0") +
        " -DLOCAL_SUMS=" + (local ? "1" : "0") +
        " -DW=" + (p.weights == DType::float32 ? "float" : "double") +
        " -DPAIRS=" + (p.dtype == DType::float32 && p.dims() == 2 && p.interleaved ? "1" : "0");
    if (info.vendor.find("NVIDIA") != std::string::npos && tuned<HistogramOpenclPolicy>(info).ptx)
      options += " -DNVIDIA_PTX=1";
    static const std::string source =
        std::string(parpat_cl_histogram_add_f64) + parpat_cl_histogram_joint;
    kernel_ = cl_.kernel("histogram_joint.cl", source, options,
                         p.weighted ? "joint_weighted" : "joint_count");
    local_size_ = group_size_for(
        kernel_, cl_, static_cast<std::size_t>(tuned<HistogramClassicPolicy>(info).block));
    const auto per_cu =
        static_cast<std::int64_t>(tuned<HistogramClassicPolicy>(info).groups_per_cu);
    const auto group = static_cast<std::int64_t>(local_size_);
    std::int64_t groups =
        std::min<std::int64_t>(info.compute_units * per_cu, (p.n + group - 1) / group);
    groups = std::max<std::int64_t>(groups, p.n / (std::int64_t{1} << 30) + 1);
    groups_ = static_cast<std::size_t>(std::max<std::int64_t>(1, groups));
  }

  void run(const JointInput& in, const Buffer& out) override {
    try {
      cl_ulong zero = 0;  // also the bits of +0.0
      cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(out.handle()), true), zero, 0,
                                    static_cast<std::size_t>(p_.slots()) * 8);
      for (cl_uint d = 0; d < 8; ++d) {
        const Buffer* c = in.coordinates[d < in.coordinates.size() ? d : 0];
        set_arg(kernel_, d, as_mem(c->handle()));
      }
      set_args_from(kernel_, 8, static_cast<cl_long>(p_.n), as_mem(axes_.handle()),
                    as_mem(edges_.handle()), static_cast<cl_uint>(p_.bins()));
      if (p_.weighted)
        set_args_from(kernel_, 12, as_mem(in.weights->handle()),
                      cl::Local(std::max<std::size_t>(local_bytes_, 8)), as_mem(out.handle()));
      else
        set_args_from(kernel_, 12, cl::Local(std::max<std::size_t>(local_bytes_, 4)),
                      as_mem(out.handle()));
      cl_.launch(kernel_, groups_ * local_size_, local_size_);
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }

 private:
  // Six doubles per axis (lo, hi, step, norm, bins, offset of its edges or −1) and every explicit
  // axis's edges one after another (one unused double when there are none).
  void upload_axes() {
    std::vector<double> axes, edges;
    for (const auto& a : p_.axes) {
      const double step = a.even ? EvenRule(a).step : 0, norm = a.even ? EvenRule(a).norm : 0;
      axes.insert(axes.end(),
                  {a.lo, a.hi, step, norm, double(a.bins), a.even ? -1.0 : double(edges.size())});
      if (!a.even) edges.insert(edges.end(), a.edges.begin(), a.edges.end());
    }
    if (edges.empty()) edges.push_back(0);
    axes_ = Buffer(device_, axes.size() * sizeof(double));
    axes_.upload(axes.data(), axes_.bytes());
    edges_ = Buffer(device_, edges.size() * sizeof(double));
    edges_.upload(edges.data(), edges_.bytes());
  }

  Device device_;
  OpenclDevice& cl_;
  JointProblem p_;
  Buffer axes_, edges_;
  cl::Kernel kernel_;
  std::size_t local_bytes_ = 0, local_size_ = 256, groups_ = 1;
};

}  // namespace

std::unique_ptr<JointKernel> make_opencl_joint(const Device& d, const JointProblem& p) {
  return std::make_unique<OpenclJoint>(d, p);
}

}  // namespace parpat::detail
