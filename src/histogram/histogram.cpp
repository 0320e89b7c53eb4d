// Histogram dispatch: bin descriptions and their validation, the default range from the data
// (with the reduce pattern), the variant registry of every backend built in, and the portable
// entry points. Kernels only ever see resolved bins and non-empty input.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "parpat/reduce.hpp"
#include "runtime/contiguous.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/variant_table.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat {

HistogramBins HistogramBins::even(std::int64_t count) {
  HistogramBins b;
  b.count = count;
  return b;
}

HistogramBins HistogramBins::even(std::int64_t count, double lo, double hi) {
  HistogramBins b;
  b.count = count;
  b.has_range = true;
  b.lo = lo;
  b.hi = hi;
  return b;
}

HistogramBins HistogramBins::explicit_edges(std::vector<double> edges) {
  HistogramBins b;
  b.kind = Kind::edges;
  b.count = static_cast<std::int64_t>(edges.size()) - 1;
  b.edges = std::move(edges);
  return b;
}

HistogramBins HistogramBins::per_value(std::int64_t minlength) {
  HistogramBins b;
  b.kind = Kind::per_value;
  b.minlength = minlength;
  return b;
}

std::vector<double> HistogramBins::edge_values() const {
  if (kind == Kind::edges) return edges;
  if (kind != Kind::even || !has_range)
    throw_invalid("bins without a range have no edges yet (resolve them on the data first)");
  detail::HistogramProblem p;
  p.bins = count;
  p.lo = lo;
  p.hi = hi;
  std::vector<double> out(static_cast<std::size_t>(count) + 1);
  for (std::int64_t i = 0; i <= count; ++i)
    out[static_cast<std::size_t>(i)] = detail::even_edge(p, i);
  return out;
}

std::vector<double> histogram_density(const HistogramResult& result) {
  const std::vector<double> edges = result.bins.edge_values();
  const std::size_t bins = result.weighted() ? result.sums.size() : result.counts.size();
  if (edges.size() != bins + 1)
    throw_invalid("a histogram of " + std::to_string(bins) + " bins needs " +
                  std::to_string(bins + 1) + " edges, got " + std::to_string(edges.size()));
  std::vector<double> density(edges.size() - 1);
  if (result.weighted()) {
    double total = 0;
    for (double v : result.sums)
      total += v;
    for (std::size_t i = 0; i < density.size(); ++i)
      density[i] = result.sums[i] / (edges[i + 1] - edges[i]) / total;
    return density;
  }
  std::uint64_t total = 0;
  for (std::uint64_t c : result.counts)
    total += c;
  for (std::size_t i = 0; i < density.size(); ++i)
    density[i] = static_cast<double>(result.counts[i]) / (edges[i + 1] - edges[i]) /
                 static_cast<double>(total);
  return density;
}

namespace {

void check_bin_count(std::int64_t count) {
  if (count <= 0)
    throw_invalid("the number of bins must be positive, got " + std::to_string(count));
  if (count > kMaxHistogramBins)
    throw_invalid("at most " + std::to_string(kMaxHistogramBins) +
                  " bins (2^26) are supported, got " + std::to_string(count));
}

void check_range(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw_invalid("the histogram range must be finite, got [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
  if (!(lo < hi))
    throw_invalid("the histogram range needs lo < hi, got [" + std::to_string(lo) + ", " +
                  std::to_string(hi) + "]");
  if (!std::isfinite(hi - lo)) throw_invalid("the histogram range is too wide for float64");
}

}  // namespace

namespace detail {

HistogramProblem problem_of(DType dtype, std::int64_t n, const HistogramBins& b) {
  HistogramProblem p;
  p.dtype = dtype;
  p.n = n;
  if (b.kind == HistogramBins::Kind::per_value ||
      (b.kind == HistogramBins::Kind::even && !b.has_range))
    throw_invalid("a histogram plan needs resolved bins (see resolve_bins)");
  check_bin_count(b.count);
  if (b.kind == HistogramBins::Kind::even) {
    check_range(b.lo, b.hi);
    p.even = true;
    p.bins = b.count;
    p.lo = b.lo;
    p.hi = b.hi;
  } else {
    if (b.edges.size() < 2) throw_invalid("explicit bins need at least two edges");
    if (static_cast<std::int64_t>(b.edges.size()) != b.count + 1)
      throw_invalid("explicit bins: count must be the number of edges minus one");
    for (std::size_t i = 0; i < b.edges.size(); ++i) {
      if (!std::isfinite(b.edges[i]))
        throw_invalid("bin edges must be finite, edge " + std::to_string(i) + " is not");
      if (i > 0 && !(b.edges[i - 1] < b.edges[i]))
        throw_invalid("bin edges must be strictly increasing, edge " + std::to_string(i) +
                      " is not greater than edge " + std::to_string(i - 1));
    }
    p.even = false;
    p.bins = b.count;
    p.edges = b.edges;
  }
  return p;
}

}  // namespace detail

namespace {

// The bin count of per-value bins that the dtype alone decides: the non-negative values of bool
// and the 8- and 16-bit integers; 0 for wider integers, whose largest value decides.
std::int64_t per_value_bins_of_dtype(DType t) {
  if (t == DType::boolean) return 2;
  if (dtype_size(t) > 2) return 0;
  const int bits = 8 * static_cast<int>(dtype_size(t)) - (is_signed_integer(t) ? 1 : 0);
  return std::int64_t{1} << bits;
}

// max + 1 bins for per-value bins whose largest value is `max` (1 when every value is negative).
std::int64_t per_value_bins_up_to(DType t, double max) {
  if (!(max < static_cast<double>(kMaxHistogramBins))) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(0) << max;
    throw_invalid("per-value bins of " + std::string(dtype_name(t)) + " input need max + 1 ≤ " +
                  std::to_string(kMaxHistogramBins) + " bins (2^26); the largest value is " +
                  text.str());
  }
  return std::max<std::int64_t>(static_cast<std::int64_t>(max) + 1, 1);
}

}  // namespace

namespace detail {

std::pair<double, double> data_range(const Array& in) {
  return {reduce(in, {ReduceOp::min, Axis::all, {}}).values.at(0).as_double(),
          reduce(in, {ReduceOp::max, Axis::all, {}}).values.at(0).as_double()};
}

HistogramBins resolve_bins_with(DType dtype, std::int64_t n, const HistogramBins& bins,
                                const std::function<std::pair<double, double>()>& data_range) {
  using Kind = HistogramBins::Kind;
  if (bins.kind == Kind::per_value) {
    if (is_float(dtype))
      throw_invalid(std::string("per-value bins need integer input, got ") + dtype_name(dtype));
    if (bins.minlength < 0 || bins.minlength > kMaxHistogramBins)
      throw_invalid("minlength must be in [0, 2^26], got " + std::to_string(bins.minlength));
    std::int64_t values = per_value_bins_of_dtype(dtype);
    if (values == 0) values = n > 0 ? per_value_bins_up_to(dtype, data_range().second) : 1;
    values = std::max(values, bins.minlength);
    check_bin_count(values);
    return HistogramBins::even(values, -0.5, static_cast<double>(values) - 0.5);
  }
  if (bins.kind == Kind::edges) {
    HistogramBins out = bins;
    out.count = static_cast<std::int64_t>(bins.edges.size()) - 1;
    problem_of(dtype, n, out);  // validates
    return out;
  }
  check_bin_count(bins.count);
  double lo = 0, hi = 1;  // numpy's range of no values
  if (bins.has_range) {
    lo = bins.lo;
    hi = bins.hi;
  } else if (n > 0) {
    std::tie(lo, hi) = data_range();
    if (!std::isfinite(lo) || !std::isfinite(hi))
      throw_invalid("autodetected range of [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "] is not finite (give --range)");
  }
  if (lo == hi) {  // numpy widens an empty range, given or found, to [v - 0.5, v + 0.5]
    lo -= 0.5;
    hi += 0.5;
  }
  check_range(lo, hi);
  return HistogramBins::even(bins.count, lo, hi);
}

bool bins_need_data(DType dtype, const HistogramBins& bins) {
  using Kind = HistogramBins::Kind;
  if (bins.kind == Kind::per_value) return !is_float(dtype) && per_value_bins_of_dtype(dtype) == 0;
  return bins.kind == Kind::even && !bins.has_range;
}

std::size_t histogram_slots(const HistogramBins& resolved) {
  return static_cast<std::size_t>((resolved.kind == HistogramBins::Kind::edges
                                       ? static_cast<std::int64_t>(resolved.edges.size()) - 1
                                       : resolved.count) +
                                  3);
}

namespace {

// Slots as bins and outliers: the last three slots (underflow, overflow, NaN) move to `outliers`,
// the rest to `bins`.
template <class V>
void split_slots(std::vector<V> slots, std::vector<V>& bins, V* const (&outliers)[3]) {
  const std::size_t bins_n = slots.size() - 3;
  for (std::size_t k = 0; k < 3; ++k)
    *outliers[k] = slots[bins_n + k];
  slots.resize(bins_n);
  bins = std::move(slots);
}

}  // namespace

HistogramResult histogram_of_slots(const HistogramBins& resolved,
                                   std::vector<std::uint64_t> slots) {
  HistogramResult r;
  r.bins = resolved;
  split_slots(std::move(slots), r.counts, {&r.underflow, &r.overflow, &r.nan});
  return r;
}

void take_outlier_slots(HistogramResult& r) {
  std::vector<std::uint64_t> bins;
  split_slots(std::move(r.counts), bins, {&r.underflow, &r.overflow, &r.nan});
  r.counts = std::move(bins);
}

HistogramResult histogram_of_sums(const HistogramBins& resolved, std::vector<double> slots) {
  HistogramResult r;
  r.bins = resolved;
  split_slots(std::move(slots), r.sums, {&r.underflow_sum, &r.overflow_sum, &r.nan_sum});
  return r;
}

void check_weights(DType weights, const std::vector<std::int64_t>& weights_shape,
                   const std::vector<std::int64_t>& values_shape) {
  auto text = [](const std::vector<std::int64_t>& shape) {
    std::string t = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
      t += (i ? ", " : "") + std::to_string(shape[i]);
    return t + (shape.size() == 1 ? ",)" : ")");
  };
  if (weights_shape != values_shape)
    throw_invalid("weights should have the same shape as the values: " + text(weights_shape) +
                  " against " + text(values_shape));
  if (weights != DType::float32 && weights != DType::float64)
    throw_invalid(std::string("weights must be float32 or float64, got ") + dtype_name(weights) +
                  " (convert them to float64 first, as numpy does)");
}

}  // namespace detail

HistogramBins resolve_bins(const Array& in, const HistogramBins& bins) {
  if (bins.kind == HistogramBins::Kind::per_value && in.size() > 0) {
    // Only the largest value matters: one reduction, not two.
    return detail::resolve_bins_with(in.dtype(), in.size(), bins, [&] {
      return std::make_pair(0.0,
                            reduce(in, {ReduceOp::max, Axis::all, {}}).values.at(0).as_double());
    });
  }
  return detail::resolve_bins_with(in.dtype(), in.size(), bins,
                                   [&] { return detail::data_range(in); });
}

namespace detail {

PARPAT_DEFINE_VARIANT_TABLE(histogram, HistogramVariant, "variant")

}  // namespace detail

struct Histogrammer::Impl {
  Device device;
  detail::HistogramProblem problem;
  std::unique_ptr<detail::HistogramKernel> kernel;           // null for empty input
  std::unique_ptr<detail::WeightedHistogramKernel> weighed;  // a weighted plan's, likewise
  std::vector<std::uint64_t> zeros;  // what empty input counts (or sums) to: all-zero bits
  detail::DenseCopy dense_values, dense_weights;  // strided inputs read through these

  void make(const HistogramOptions& options) {
    const auto& variant = detail::find_histogram_variant(device.backend(), options.variant);
    if (problem.weighted && !variant.make_weighted)
      throw Error(ErrorKind::unsupported,
                  "histogram variant " + variant.info.name + " on " +
                      backend_name(device.backend()) + " takes no weights (" +
                      (device.backend() == Backend::cpu ? "serial and parallel do"
                                                        : "interleaved and fast do") +
                      ")");
    if (problem.n == 0) {
      zeros.assign(static_cast<std::size_t>(problem.slots()), 0);
      return;
    }
    if (!variant.supports(problem, device.info()))
      throw Error(ErrorKind::unsupported, "histogram variant " + variant.info.name + " on " +
                                              backend_name(device.backend()) + " does not cover " +
                                              std::to_string(problem.bins) + " bins of " +
                                              dtype_name(problem.dtype) + " (" +
                                              variant.info.limits + ")");
    if (problem.weighted)
      weighed = variant.make_weighted(device, problem);
    else
      kernel = variant.make(device, problem);
  }
  void check_device(const Buffer& b) const {
    if (&b.device().impl() != &device.impl())
      throw_invalid("histogram plan of " + device.label() +
                    " was given an array or counts of another device");
  }
};

Histogrammer::Histogrammer(const Device& device, DType dtype, std::int64_t n,
                           const HistogramBins& resolved, const HistogramOptions& options)
    : impl_(
          new Impl{device, detail::problem_of(dtype, n, resolved), nullptr, nullptr, {}, {}, {}}) {
  impl_->make(options);
}

Histogrammer::Histogrammer(const Device& device, DType dtype, DType weights, std::int64_t n,
                           const HistogramBins& resolved, const HistogramOptions& options)
    : impl_(
          new Impl{device, detail::problem_of(dtype, n, resolved), nullptr, nullptr, {}, {}, {}}) {
  detail::check_weights(weights, {n}, {n});
  impl_->problem.weighted = true;
  impl_->problem.weights = weights;
  impl_->make(options);
}

Histogrammer::~Histogrammer() = default;
Histogrammer::Histogrammer(Histogrammer&&) noexcept = default;
Histogrammer& Histogrammer::operator=(Histogrammer&&) noexcept = default;

bool Histogrammer::weighted() const {
  return impl_->problem.weighted;
}

std::int64_t Histogrammer::bins() const {
  return impl_->problem.bins;
}

std::size_t Histogrammer::temp_bytes() const {
  if (impl_->weighed) return impl_->weighed->temp_bytes();
  return impl_->kernel ? impl_->kernel->temp_bytes() : 0;
}

void Histogrammer::run(const Array& in, const Buffer& counts, bool accumulate, Stream stream) {
  const auto& p = impl_->problem;
  if (p.weighted) throw_invalid("a weighted histogram plan runs with weights");
  if (in.dtype() != p.dtype || in.size() != p.n)
    throw_invalid("histogram plan was made for another array size or dtype");
  if (counts.bytes() < static_cast<std::size_t>(p.slots()) * sizeof(std::uint64_t))
    throw_invalid("histogram counts buffer is too small (needs bins + 3 uint64)");
  impl_->check_device(in.buffer());
  impl_->check_device(counts);
  detail::StreamScope scope(impl_->device.impl(), stream);
  if (!impl_->kernel) {
    if (!accumulate)
      counts.device().impl().upload(counts.handle(), 0, impl_->zeros.data(),
                                    impl_->zeros.size() * sizeof(std::uint64_t));
    return;
  }
  // A view of one step throughout is read in place by a kernel that reads steps.
  const std::int64_t step = impl_->kernel->reads_steps() ? detail::uniform_step(in) : 0;
  if (step > 0)
    impl_->kernel->run(in.buffer(), step, counts, accumulate);
  else
    impl_->kernel->run(impl_->dense_values.of(in).buffer(), 1, counts, accumulate);
}

void Histogrammer::run(const Array& in, const Array& weights, const Buffer& sums, bool accumulate,
                       Stream stream) {
  const auto& p = impl_->problem;
  if (!p.weighted) throw_invalid("this histogram plan takes no weights");
  if (in.dtype() != p.dtype || in.size() != p.n)
    throw_invalid("histogram plan was made for another array size or dtype");
  if (weights.dtype() != p.weights || weights.size() != p.n)
    throw_invalid("histogram plan was made for weights of another size or dtype");
  if (sums.bytes() < static_cast<std::size_t>(p.slots()) * sizeof(double))
    throw_invalid("histogram sums buffer is too small (needs bins + 3 float64)");
  impl_->check_device(in.buffer());
  impl_->check_device(weights.buffer());
  impl_->check_device(sums);
  detail::StreamScope scope(impl_->device.impl(), stream);
  if (!impl_->weighed) {
    if (!accumulate)
      sums.device().impl().upload(sums.handle(), 0, impl_->zeros.data(),
                                  impl_->zeros.size() * sizeof(double));
    return;
  }
  impl_->weighed->run(impl_->dense_values.of(in).buffer(),
                      impl_->dense_weights.of(weights).buffer(), sums, accumulate);
}

HistogramResult histogram(const Array& in, const HistogramBins& bins,
                          const HistogramOptions& options) {
  Device device = in.device();
  const HistogramBins resolved = resolve_bins(in, bins);
  Histogrammer plan(device, in.dtype(), in.size(), resolved, options);
  Buffer counts(device, static_cast<std::size_t>(plan.slots()) * sizeof(std::uint64_t));
  double time_ms = 0;
  if (options.timed) {
    device.impl().timer_start(detail::TimerMode::events_only);
    plan.run(in, counts);
    time_ms = device.impl().timer_stop_ms();
  } else {
    plan.run(in, counts);
  }
  std::vector<std::uint64_t> all(static_cast<std::size_t>(plan.slots()));
  counts.download(all.data(), all.size() * sizeof(std::uint64_t));
  HistogramResult result = detail::histogram_of_slots(resolved, std::move(all));
  result.time_ms = time_ms;
  return result;
}

HistogramResult histogram(const Array& in, const Array& weights, const HistogramBins& bins,
                          const HistogramOptions& options) {
  detail::check_weights(weights.dtype(), weights.shape(), in.shape());
  if (&weights.device().impl() != &in.device().impl())
    throw_invalid("the weights must be on the values' device");
  Device device = in.device();
  const HistogramBins resolved = resolve_bins(in, bins);
  Histogrammer plan(device, in.dtype(), weights.dtype(), in.size(), resolved, options);
  Buffer sums(device, static_cast<std::size_t>(plan.slots()) * sizeof(double));
  if (options.timed) device.impl().timer_start(detail::TimerMode::events_only);
  plan.run(in, weights, sums);
  const double time_ms = options.timed ? device.impl().timer_stop_ms() : 0;
  std::vector<double> all(static_cast<std::size_t>(plan.slots()));
  sums.download(all.data(), all.size() * sizeof(double));
  HistogramResult result = detail::histogram_of_sums(resolved, std::move(all));
  result.time_ms = time_ms;
  return result;
}

}  // namespace parpat
