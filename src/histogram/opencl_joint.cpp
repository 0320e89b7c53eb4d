// OpenCL joint histogram `fast` (histogram_joint.cl): one program per problem, built with the
// dtype, the dimension count and the layout as constants. Counts go where 1-D `fast` would count
// as many rows (opencl_layout.cpp: lane-striped 32-bit local counters, packed fields in ranges
// of rows counted side by side, or the 64-bit global counts); 2-D float32 samples with even bins
// whose float rule holds on both axes are read as 16-byte vectors and placed in float arithmetic
// (joint_pairs), the others one at a time by the float64 axes (joint_count). Weighted sums go to
// float64 local sums or the global sums (the hardware's float64 reductions through inline PTX on
// NVIDIA). Needs cl_khr_fp64 and cl_khr_int64_base_atomics.
#include <algorithm>
#include <string>

#include "histogram/joint.hpp"
#include "histogram/opencl_layout.hpp"
#include "histogram/opencl_rule.hpp"
#include "histogram/tuning.hpp"

extern const char* const parpat_cl_histogram_add_f64;
extern const char* const parpat_cl_histogram_rules;
extern const char* const parpat_cl_histogram_sink;
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
    std::string options = std::string("-DT=") + opencl_type_name(p.dtype) +
                          " -DBOOL_INPUT=" + (p.dtype == DType::boolean ? "1" : "0") +
                          " -DDIMS=" + std::to_string(p.dims()) +
                          " -DINTERLEAVED=" + (p.interleaved ? "1" : "0");
    if (info.vendor.find("NVIDIA") != std::string::npos && tuned<HistogramOpenclPolicy>(info).ptx)
      options += " -DNVIDIA_PTX=1";
    if (p.weighted) {
      configure_weighted(options);
    } else {
      configure_count(options);
    }
  }

  void run(const JointInput& in, const Buffer& out) override {
    try {
      cl_ulong zero = 0;  // also the bits of +0.0
      cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(out.handle()), true), zero, 0,
                                    static_cast<std::size_t>(p_.slots()) * 8);
      if (pairs_) {
        const Buffer* second = in.coordinates[in.coordinates.size() > 1 ? 1 : 0];
        set_args_from(kernel_, 0, as_mem(in.coordinates[0]->handle()), as_mem(second->handle()),
                      static_cast<cl_long>(p_.n));
        cl_uint next = 3;
        for (const FloatEvenRule& q : quick_)
          next = set_args_from(kernel_, next, q.lo, q.norm, q.delta, static_cast<cl_int>(q.bins));
        next = set_args_from(kernel_, next, as_mem(axes_.handle()), as_mem(edges_.handle()));
        set_layout_args(next, out);
      } else {
        for (cl_uint d = 0; d < 8; ++d) {
          const Buffer* c = in.coordinates[d < in.coordinates.size() ? d : 0];
          set_arg(kernel_, d, as_mem(c->handle()));
        }
        const cl_uint next = set_args_from(kernel_, 8, static_cast<cl_long>(p_.n),
                                           as_mem(axes_.handle()), as_mem(edges_.handle()));
        if (p_.weighted) {
          set_args_from(kernel_, next, static_cast<cl_uint>(p_.bins()),
                        as_mem(in.weights->handle()),
                        cl::Local(std::max<std::size_t>(local_bytes_, 8)), as_mem(out.handle()));
        } else {
          set_layout_args(next, out);
        }
      }
      cl_.launch(kernel_, groups_ * local_size_, local_size_);
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }

 private:
  // Counting: the layout of 1-D `fast` for slots() rows, groups of histogram.fast.block in sets
  // of `passes` over the same chunk, as many as local_groups_per_cu gives (global counting:
  // histogram.opencl.global_groups_per_cu, the resident grid).
  void configure_count(std::string options) {
    const auto& info = device_.info();
    const HistogramFastPolicy fast = tuned<HistogramFastPolicy>(info);
    const HistogramOpenclPolicy opencl = tuned<HistogramOpenclPolicy>(info);
    layout_ = fast_rows_layout(static_cast<std::uint32_t>(p_.slots()), info, fast, opencl);
    for (const auto& axis : p_.axes)
      quick_.push_back(axis.even && p_.dtype == DType::float32 ? FloatEvenRule(axis)
                                                               : FloatEvenRule());
    pairs_ = p_.dims() == 2 && quick_[0].usable && quick_[1].usable;
    const int vec = p_.interleaved ? 2 : 4;  // samples in a unit of 16-byte loads
    // As many bytes in flight as 1-D `fast`: two arrays load two vectors a unit.
    const int unroll = std::max(1, p_.interleaved ? fast.vectors : fast.vectors / 2);
    options += " -DJOINT_WEIGHTED=0 -DLOCAL_COUNTS=" + std::string(layout_.global ? "0" : "1") +
               " -DCOLUMNS=" + std::to_string(layout_.columns) +
               " -DRUNS=" + (layout_.runs ? "1" : "0") +
               " -DWHOLE=" + (layout_.passes == 1 ? "1" : "0") +
               " -DFIELD_BITS=" + std::to_string(layout_.field_bits) +
               " -DHOT_ENTRIES=" + std::to_string(layout_.hot_entries) +
               " -DPAIRS=" + (pairs_ ? "1" : "0") + " -DVEC=" + std::to_string(vec) +
               " -DUNROLL=" + std::to_string(unroll);
    static const std::string source = std::string(parpat_cl_histogram_rules) +
                                      parpat_cl_histogram_sink + parpat_cl_histogram_joint;
    kernel_ =
        cl_.kernel("histogram_joint.cl", source, options, pairs_ ? "joint_pairs" : "joint_count");
    local_size_ = group_size_for(kernel_, cl_, static_cast<std::size_t>(fast.block));
    local_bytes_ = layout_.local_bytes;
    const std::int64_t per_cu = layout_.global
                                    ? opencl.global_groups_per_cu
                                    : local_groups_per_cu(layout_, p_.n, info, fast, opencl);
    const std::int64_t passes = layout_.global ? 1 : layout_.passes;
    const auto group = static_cast<std::int64_t>(local_size_);
    const std::int64_t per_group = pairs_ ? vec : 1;  // samples a work-item takes per step
    std::int64_t chunks =
        std::int64_t{info.compute_units} * std::max<std::int64_t>(per_cu, 1) / passes;
    chunks = std::min<std::int64_t>(chunks, (p_.n + per_group * group - 1) / (per_group * group));
    chunks = std::max<std::int64_t>(chunks, (p_.n + kMaxValuesPerGroup - 1) / kMaxValuesPerGroup);
    groups_ = static_cast<std::size_t>(std::max<std::int64_t>(chunks, 1) * passes);
  }

  // Weighted sums: float64 local sums in lane-striped columns where they fit, else the global
  // sums; histogram.classic's groups.
  void configure_weighted(std::string options) {
    const auto& info = device_.info();
    const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(info);
    const std::size_t budget = std::min<std::uint64_t>(
        {std::uint64_t(policy.striped_kib) << 10, info.local_memory, 48u << 10});
    const std::size_t row = std::size_t(p_.slots()) * 8;
    const bool local = row <= budget;
    std::size_t columns = 1;
    while (local && columns < 32 && int(columns * 2) <= policy.max_columns &&
           row * columns * 2 <= budget)
      columns *= 2;
    local_bytes_ = local ? row * columns : 0;
    options += " -DJOINT_WEIGHTED=1 -DCOLUMNS=" + std::to_string(columns) +
               " -DLOCAL_SUMS=" + (local ? "1" : "0") +
               " -DW=" + (p_.weights == DType::float32 ? "float" : "double");
    static const std::string source =
        std::string(parpat_cl_histogram_add_f64) + parpat_cl_histogram_joint;
    kernel_ = cl_.kernel("histogram_joint.cl", source, options, "joint_weighted");
    local_size_ = group_size_for(
        kernel_, cl_, static_cast<std::size_t>(tuned<HistogramClassicPolicy>(info).block));
    const auto per_cu =
        static_cast<std::int64_t>(tuned<HistogramClassicPolicy>(info).groups_per_cu);
    const auto group = static_cast<std::int64_t>(local_size_);
    std::int64_t groups =
        std::min<std::int64_t>(info.compute_units * per_cu, (p_.n + group - 1) / group);
    groups = std::max<std::int64_t>(groups, p_.n / kMaxValuesPerGroup + 1);
    groups_ = static_cast<std::size_t>(std::max<std::int64_t>(1, groups));
  }

  // The counting kernels' last arguments from `first`: passes, span, counted rows, the local
  // counters and the counts.
  void set_layout_args(cl_uint first, const Buffer& out) {
    set_args_from(kernel_, first, static_cast<cl_uint>(layout_.global ? 1 : layout_.passes),
                  static_cast<cl_uint>(layout_.range), static_cast<cl_uint>(layout_.counted),
                  cl::Local(std::max<std::size_t>(local_bytes_, 4)), as_mem(out.handle()));
  }

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
  FastLayout layout_;                 // counting
  std::vector<FloatEvenRule> quick_;  // counting: each axis's float rule (usable: float32, even)
  bool pairs_ = false;                // counting 2-D float32 samples by the float rule
  std::size_t local_bytes_ = 0, local_size_ = 256, groups_ = 1;
};

}  // namespace

std::unique_ptr<JointKernel> make_opencl_joint(const Device& d, const JointProblem& p) {
  return std::make_unique<OpenclJoint>(d, p);
}

}  // namespace parpat::detail
