// Joint histograms (numpy.histogramdd): the bins of each dimension resolved as the
// one-dimensional histogram resolves them, the samples counted on their device by the
// backend's joint kernel (CPU: `parallel`, or the reference as `serial`; CUDA and OpenCL:
// `fast`), and numpy's density.
#include <algorithm>
#include <cstring>
#include <string>

#include "histogram/joint.hpp"
#include "parpat/error.hpp"
#include "parpat/reduce.hpp"
#include "runtime/contiguous.hpp"
#include "runtime/device_impl.hpp"

namespace parpat {

std::int64_t HistogramDDResult::size() const {
  std::int64_t b = 1;
  for (std::int64_t s : shape)
    b *= s;
  return b;
}

namespace detail {

void joint_histogram_reference(const JointProblem& p, const std::vector<const void*>& in,
                               const void* weights, void* out) {
  const std::int64_t bins = p.bins();
  auto* counts = static_cast<std::uint64_t*>(out);
  auto* sums = static_cast<double*>(out);
  std::fill(counts, counts + p.slots(), 0);  // +0.0 has the bits of 0
  for (std::int64_t i = 0; i < p.n; ++i) {
    std::int64_t slot = 0;
    for (int d = 0; d < p.dims() && slot < bins; ++d) {
      const HistogramProblem& axis = p.axes[static_cast<std::size_t>(d)];
      const std::int64_t s = reference_slot(axis, joint_coordinate(p, in, i, d));
      slot = s < axis.bins ? slot * axis.bins + s : bins;
    }
    if (p.weighted) {
      sums[slot] += weight_at(weights, p.weights, i);
    } else {
      ++counts[slot];
    }
  }
}

}  // namespace detail

namespace {

using detail::JointProblem;

// The samples' arrays as one problem's input: dtype, length, layout and dimension count.
struct Samples {
  std::vector<Array> arrays;
  bool interleaved = true;
  std::int64_t n = 0;
  int dims = 0;
};

Samples samples_of(const Array& sample) {
  if (sample.ndim() != 1 && sample.ndim() != 2)
    throw_invalid("histogramdd takes an (N, D) array of samples, got " +
                  std::to_string(sample.ndim()) + " dimensions");
  Samples s{{sample},
            true,
            sample.ndim() == 1 ? sample.size() : sample.rows(),
            sample.ndim() == 1 ? 1 : static_cast<int>(sample.cols())};
  if (sample.ndim() == 2 && (sample.cols() < 1 || sample.cols() > kMaxHistogramDims))
    throw_invalid("histogramdd takes 1 to " + std::to_string(kMaxHistogramDims) +
                  " dimensions, got " + std::to_string(sample.cols()));
  return s;
}

Samples samples_of(const std::vector<Array>& coordinates) {
  if (coordinates.empty() || coordinates.size() > static_cast<std::size_t>(kMaxHistogramDims))
    throw_invalid("histogramdd takes 1 to " + std::to_string(kMaxHistogramDims) +
                  " coordinate arrays, got " + std::to_string(coordinates.size()));
  const Array& first = coordinates.front();
  for (const Array& a : coordinates) {
    if (a.ndim() != 1) throw_invalid("histogramdd's coordinate arrays must be one-dimensional");
    if (a.size() != first.size())
      throw_invalid("histogramdd's coordinate arrays must have one length, got " +
                    std::to_string(first.size()) + " and " + std::to_string(a.size()));
    if (a.dtype() != first.dtype())
      throw_invalid(std::string("histogramdd's coordinate arrays must have one dtype, got ") +
                    dtype_name(first.dtype()) + " and " + dtype_name(a.dtype()));
    if (&a.device().impl() != &first.device().impl())
      throw_invalid("histogramdd's coordinate arrays must be on one device");
  }
  return {coordinates, false, first.size(), static_cast<int>(coordinates.size())};
}

// [min, max] of each coordinate, found with parpat::reduce on the samples' device.
std::vector<std::pair<double, double>> coordinate_ranges(const Samples& s) {
  std::vector<std::pair<double, double>> ranges;
  auto value = [](const ReduceResult& r, std::size_t i) { return r.values.at(i).as_double(); };
  if (s.arrays[0].ndim() == 2) {  // a table: each column's
    const ReduceResult lo = reduce(s.arrays[0], {ReduceOp::min, Axis::cols, {}});
    const ReduceResult hi = reduce(s.arrays[0], {ReduceOp::max, Axis::cols, {}});
    for (int d = 0; d < s.dims; ++d)
      ranges.emplace_back(value(lo, std::size_t(d)), value(hi, std::size_t(d)));
  } else {
    for (const Array& a : s.arrays)
      ranges.emplace_back(value(reduce(a, {ReduceOp::min, Axis::all, {}}), 0),
                          value(reduce(a, {ReduceOp::max, Axis::all, {}}), 0));
  }
  return ranges;
}

// The problem of `dims`-dimensional samples of `dtype` under `bins`; `range_of(d)` gives [min,
// max] of coordinate d where a dimension's even bins have no range.
template <class RangeOf>
JointProblem problem_of(DType dtype, std::int64_t n, bool interleaved, int dims,
                        const std::vector<HistogramBins>& bins, RangeOf range_of) {
  if (bins.size() != 1 && bins.size() != static_cast<std::size_t>(dims))
    throw_invalid("histogramdd of " + std::to_string(dims) + " dimensions takes 1 or " +
                  std::to_string(dims) + " bin specifications, got " + std::to_string(bins.size()));
  JointProblem p;
  p.dtype = dtype;
  if (p.dtype == DType::float16 || p.dtype == DType::bfloat16)
    throw Error(ErrorKind::unsupported, std::string("histogramdd does not take ") +
                                            dtype_name(p.dtype) +
                                            " samples (cast them to float32)");
  p.n = n;
  p.interleaved = interleaved;
  std::int64_t total = 1;
  for (int d = 0; d < dims; ++d) {
    const HistogramBins& b = bins.size() == 1 ? bins[0] : bins[std::size_t(d)];
    if (b.kind == HistogramBins::Kind::per_value)
      throw_invalid("histogramdd takes even bins or edges per dimension, not per-value bins");
    const HistogramBins resolved =
        detail::resolve_bins_with(p.dtype, p.n, b, [&] { return range_of(d); });
    p.axes.push_back(detail::problem_of(p.dtype, p.n, resolved));
    total *= p.axes.back().bins;
    if (total > kMaxHistogramBins)
      throw_invalid("histogramdd takes at most " + std::to_string(kMaxHistogramBins) +
                    " bins in all (2^26)");
  }
  return p;
}

JointProblem problem_of(const Samples& s, const std::vector<HistogramBins>& bins) {
  std::vector<std::pair<double, double>> ranges;  // found once, when a dimension needs them
  return problem_of(s.arrays[0].dtype(), s.n, s.interleaved, s.dims, bins, [&](int d) {
    if (ranges.empty()) ranges = coordinate_ranges(s);
    return ranges[std::size_t(d)];
  });
}

std::unique_ptr<detail::JointKernel> make_kernel(const Device& device, const JointProblem& p,
                                                 const std::string& variant) {
  const Backend backend = device.backend();
  const std::string name =
      variant.empty() ? (backend == Backend::cpu ? "parallel" : "fast") : variant;
  if (backend == Backend::cpu && name == "serial") return nullptr;  // the reference
  if (backend == Backend::cpu && name == "parallel") return detail::make_cpu_joint(device, p);
#if defined(PARPAT_HAVE_CUDA)
  if (backend == Backend::cuda && name == "fast") return detail::make_cuda_joint(device, p);
#endif
#if defined(PARPAT_HAVE_OPENCL)
  if (backend == Backend::opencl && name == "fast") return detail::make_opencl_joint(device, p);
#endif
  throw Error(ErrorKind::unsupported, "histogramdd has no variant " + name + " on " +
                                          backend_name(backend) +
                                          " (serial and parallel on the CPU, fast on GPUs)");
}

// One problem bound to its kernel (none: the CPU reference, `serial`), run on the current stream.
struct JointPlan {
  Device device;
  JointProblem p;
  std::unique_ptr<detail::JointKernel> kernel;
  std::vector<detail::DenseCopy> dense_arrays;  // strided samples read through these
  detail::DenseCopy dense_weights;

  JointPlan(const Device& d, JointProblem problem, const std::string& variant)
      : device(d), p(std::move(problem)), kernel(make_kernel(d, p, variant)) {}

  std::size_t out_bytes() const { return static_cast<std::size_t>(p.slots()) * 8; }

  // The counts (or sums) of samples `s` (with `weights` where weighted) into `out`.
  void run(const Samples& s, const Array* weights, const Buffer& out) {
    if (p.n == 0) {
      const std::vector<std::uint64_t> zeros(static_cast<std::size_t>(p.slots()), 0);
      device.impl().upload(out.handle(), 0, zeros.data(), out_bytes());  // +0.0 has 0's bits
      return;
    }
    // Strided views are read through dense copies on the device.
    dense_arrays.resize(s.arrays.size());
    std::vector<Array> arrays;
    for (std::size_t k = 0; k < s.arrays.size(); ++k)
      arrays.push_back(dense_arrays[k].of(s.arrays[k]));
    const Array w = weights ? dense_weights.of(*weights) : Array();
    const Buffer* weight_buffer = weights ? &w.buffer() : nullptr;
    if (kernel) {
      detail::JointInput in;
      for (const Array& a : arrays)
        in.coordinates.push_back(&a.buffer());
      in.weights = weight_buffer;
      kernel->run(in, out);
      return;
    }
    std::vector<const void*> in;  // the CPU reference reads host memory in place
    for (const Array& a : arrays)
      in.push_back(a.buffer().handle());
    detail::joint_histogram_reference(p, in, weight_buffer ? weight_buffer->handle() : nullptr,
                                      out.handle());
  }
};

HistogramDDResult count(const Samples& s, const Array* weights,
                        const std::vector<HistogramBins>& bins, const HistogramOptions& options) {
  JointProblem p = problem_of(s, bins);
  const Device device = s.arrays[0].device();
  if (weights) {
    detail::check_weights(weights->dtype(), weights->shape(), {s.n});
    if (&weights->device().impl() != &device.impl())
      throw_invalid("the weights must be on the samples' device");
    p.weighted = true;
    p.weights = weights->dtype();
  }
  JointPlan plan(device, std::move(p), options.variant);
  const std::size_t bytes = plan.out_bytes();
  std::vector<std::uint64_t> slots(static_cast<std::size_t>(plan.p.slots()), 0);
  HistogramDDResult r;
  Buffer out(device, bytes);
  if (options.timed) device.impl().timer_start(detail::TimerMode::events_only);
  plan.run(s, weights, out);
  if (options.timed) r.time_ms = device.impl().timer_stop_ms();
  out.download(slots.data(), bytes);
  for (const auto& axis : plan.p.axes) {
    r.bins.push_back(axis.even ? HistogramBins::even(axis.bins, axis.lo, axis.hi)
                               : HistogramBins::explicit_edges(axis.edges));
    r.shape.push_back(axis.bins);
  }
  if (plan.p.weighted) {
    r.sums.resize(slots.size());
    std::memcpy(r.sums.data(), slots.data(), bytes);
    r.outside_sum = r.sums.back();
    r.sums.pop_back();
  } else {
    r.outside = slots.back();
    slots.pop_back();
    r.counts = std::move(slots);
  }
  return r;
}

}  // namespace

HistogramDDResult histogramdd(const Array& sample, const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options) {
  return count(samples_of(sample), nullptr, bins, options);
}

HistogramDDResult histogramdd(const std::vector<Array>& coordinates,
                              const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options) {
  return count(samples_of(coordinates), nullptr, bins, options);
}

HistogramDDResult histogramdd(const Array& sample, const Array& weights,
                              const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options) {
  return count(samples_of(sample), &weights, bins, options);
}

HistogramDDResult histogramdd(const std::vector<Array>& coordinates, const Array& weights,
                              const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options) {
  return count(samples_of(coordinates), &weights, bins, options);
}

struct JointHistogrammer::Impl {
  JointPlan plan;
  bool table;

  // The samples of one run as the plan's: their layout, dtype, count and device.
  Samples samples(const std::vector<Array>& arrays) const {
    if (arrays.empty()) throw_invalid("a joint histogram plan runs with its samples");
    const Samples s = table ? samples_of(arrays[0]) : samples_of(arrays);
    const JointProblem& p = plan.p;
    if ((table && arrays.size() != 1) || s.dims != p.dims() || s.n != p.n ||
        s.arrays[0].dtype() != p.dtype)
      throw_invalid("joint histogram plan was made for other samples (layout, size or dtype)");
    if (&s.arrays[0].device().impl() != &plan.device.impl())
      throw_invalid("joint histogram plan was made for another device");
    return s;
  }
  void check_out(const Buffer& out) const {
    if (out.bytes() < plan.out_bytes())
      throw_invalid("joint histogram output is too small (needs the bins + 1 values of 8 bytes)");
    if (&out.device().impl() != &plan.device.impl())
      throw_invalid("joint histogram output must be on the plan's device");
  }
};

JointHistogrammer::JointHistogrammer(const Device& device, DType dtype, std::int64_t n, bool table,
                                     const std::vector<HistogramBins>& resolved,
                                     std::optional<DType> weights,
                                     const HistogramOptions& options) {
  const int dims = static_cast<int>(resolved.size());
  if (dims < 1 || dims > kMaxHistogramDims)
    throw_invalid("histogramdd takes 1 to " + std::to_string(kMaxHistogramDims) +
                  " dimensions, got " + std::to_string(dims));
  if (n < 0) throw_invalid("a joint histogram plan takes a sample count of at least 0");
  JointProblem p =
      problem_of(dtype, n, table, dims, resolved, [](int d) -> std::pair<double, double> {
        throw_invalid("a joint histogram plan takes resolved bins: dimension " + std::to_string(d) +
                      " has even bins without a range");
      });
  if (weights) {
    detail::check_weights(*weights, {n}, {n});
    p.weighted = true;
    p.weights = *weights;
  }
  impl_.reset(new Impl{JointPlan(device, std::move(p), options.variant), table});
}

JointHistogrammer::~JointHistogrammer() = default;
JointHistogrammer::JointHistogrammer(JointHistogrammer&&) noexcept = default;
JointHistogrammer& JointHistogrammer::operator=(JointHistogrammer&&) noexcept = default;

bool JointHistogrammer::weighted() const {
  return impl_->plan.p.weighted;
}

std::int64_t JointHistogrammer::slots() const {
  return impl_->plan.p.slots();
}

std::vector<std::int64_t> JointHistogrammer::shape() const {
  std::vector<std::int64_t> shape;
  for (const auto& axis : impl_->plan.p.axes)
    shape.push_back(axis.bins);
  return shape;
}

void JointHistogrammer::run(const std::vector<Array>& samples, const Buffer& out, Stream stream) {
  if (weighted()) throw_invalid("a weighted joint histogram plan runs with weights");
  const Samples s = impl_->samples(samples);
  impl_->check_out(out);
  detail::StreamScope scope(impl_->plan.device.impl(), stream);
  impl_->plan.run(s, nullptr, out);
}

void JointHistogrammer::run(const std::vector<Array>& samples, const Array& weights,
                            const Buffer& out, Stream stream) {
  if (!weighted()) throw_invalid("this joint histogram plan takes no weights");
  const Samples s = impl_->samples(samples);
  if (weights.dtype() != impl_->plan.p.weights)
    throw_invalid("joint histogram plan was made for weights of another dtype");
  detail::check_weights(weights.dtype(), weights.shape(), {s.n});
  if (&weights.device().impl() != &impl_->plan.device.impl())
    throw_invalid("the weights must be on the samples' device");
  impl_->check_out(out);
  detail::StreamScope scope(impl_->plan.device.impl(), stream);
  impl_->plan.run(s, &weights, out);
}

std::vector<double> histogramdd_density(const HistogramDDResult& r) {
  std::vector<double> density(static_cast<std::size_t>(r.size()));
  double total = 0;
  for (std::size_t i = 0; i < density.size(); ++i) {
    density[i] = r.weighted() ? r.sums[i] : static_cast<double>(r.counts[i]);
    total += density[i];
  }
  // Divided by each dimension's widths in turn, then by the total, as numpy does.
  std::int64_t inner = r.size();
  for (std::size_t d = 0; d < r.shape.size(); ++d) {
    const std::vector<double> edges = r.bins[d].edge_values();
    inner /= r.shape[d];
    for (std::size_t i = 0; i < density.size(); ++i) {
      const auto bin = static_cast<std::size_t>(static_cast<std::int64_t>(i) / inner % r.shape[d]);
      density[i] /= edges[bin + 1] - edges[bin];
    }
  }
  for (double& v : density)
    v /= total;
  return density;
}

}  // namespace parpat
