// Reduce dispatch: names, result types, the variant registry of every backend built in, and the
// portable entry points, which handle empty extents themselves so kernels never see them.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>

#include "reduce/axes.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "runtime/contiguous.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/names.hpp"
#include "runtime/variant_table.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat {

namespace {
constexpr const char* kOpNames[] = {
    "sum",       "prod",    "min",    "max",     "argmin",        "argmax", "mean",
    "var",       "std",     "nansum", "nanprod", "nanmin",        "nanmax", "nanargmin",
    "nanargmax", "nanmean", "nanvar", "nanstd",  "count_nonzero", "any",    "all"};
constexpr const char* kAxisNames[] = {"all", "rows", "cols"};
}  // namespace

const char* reduce_op_name(ReduceOp op) {
  return kOpNames[static_cast<int>(op)];
}
ReduceOp parse_reduce_op(const std::string& name) {
  return detail::parse_word<ReduceOp>(kOpNames, name, "op");
}
const char* axis_name(Axis axis) {
  return kAxisNames[static_cast<int>(axis)];
}
Axis parse_axis(const std::string& name) {
  return detail::parse_word<Axis>(kAxisNames, name, "axis");
}
bool is_arg_op(ReduceOp op) {
  return op == ReduceOp::argmin || op == ReduceOp::argmax || op == ReduceOp::nanargmin ||
         op == ReduceOp::nanargmax;
}

DType reduce_result_dtype(DType input, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::prod:
    case ReduceOp::nansum:
    case ReduceOp::nanprod:
      if (is_float(input)) return input;
      // numpy: bool sums count in the default integer
      return is_signed_integer(input) || input == DType::boolean ? DType::int64 : DType::uint64;
    case ReduceOp::count_nonzero:
      return DType::int64;
    case ReduceOp::any:
    case ReduceOp::all:
      return DType::boolean;
    default:
      if (detail::statistic_of(op)) return is_float(input) ? input : DType::float64;
      return input;
  }
}

Scalar Scalar::from_bytes(DType dtype, const void* p) {
  Scalar s;
  s.dtype = dtype;
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (is_float_type<T>) {
      s.f = static_cast<double>(v);
    } else if constexpr (std::is_signed_v<T>) {
      s.i = v;
    } else {
      s.u = v;
    }
  });
  return s;
}

double Scalar::as_double() const {
  if (is_float(dtype)) return f;
  return is_signed_integer(dtype) ? static_cast<double>(i) : static_cast<double>(u);
}

std::string Scalar::to_string() const {
  if (dtype == DType::boolean) return u ? "True" : "False";  // as numpy prints it
  if (!is_float(dtype)) return is_signed_integer(dtype) ? std::to_string(i) : std::to_string(u);
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[64];
  if (dtype == DType::float16 || dtype == DType::bfloat16) {
    // The fewest significant digits that read back as the same 16-bit value.
    const auto bits_of = [&](double v) {
      return dtype == DType::float16 ? float16(v).bits : bfloat16(v).bits;
    };
    for (int digits = 1;; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, f);
      if (bits_of(std::strtod(buf, nullptr)) == bits_of(f)) return buf;
    }
  }
  auto res = dtype == DType::float32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(f))
                                     : std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, res.ptr);
}

namespace detail {

PARPAT_DEFINE_VARIANT_TABLE(reduce, ReduceVariant, "variant")

std::optional<Statistic> statistic_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::mean:
    case ReduceOp::nanmean:
      return Statistic::mean;
    case ReduceOp::var:
    case ReduceOp::nanvar:
      return Statistic::var;
    case ReduceOp::std:
    case ReduceOp::nanstd:
      return Statistic::std;
    default:
      return std::nullopt;
  }
}

std::unique_ptr<ReduceKernel> make_reduce_kernel(const Device& device, const ReduceShape& s,
                                                 const std::string& name) {
  const auto& variant = find_reduce_variant(device.backend(), name);
  if (!variant.supports(s, device.info()) || (s.col_step != 1 && !variant.reads_steps)) {
    throw Error(ErrorKind::unsupported,
                "variant " + name + " on " + backend_name(device.backend()) + " does not cover " +
                    reduce_op_name(s.op) + " of " + dtype_name(s.dtype) + " along axis " +
                    axis_name(s.axis) + " (" + variant.info.limits + ")");
  }
  return variant.make(device, s);
}

void check_ddof(double ddof) {
  if (!std::isfinite(ddof) || ddof < 0) throw_invalid("ddof must be a finite number ≥ 0");
}

bool is_basic_reduce_op(ReduceOp op) {
  return static_cast<int>(op) <= static_cast<int>(ReduceOp::argmax);
}

ReduceOp plain_reduce_op(ReduceOp op) {
  if (!is_nan_reduce_op(op)) return op;
  constexpr ReduceOp kPlain[] = {ReduceOp::sum,  ReduceOp::prod,   ReduceOp::min,
                                 ReduceOp::max,  ReduceOp::argmin, ReduceOp::argmax,
                                 ReduceOp::mean, ReduceOp::var,    ReduceOp::std};
  return kPlain[static_cast<int>(op) - static_cast<int>(ReduceOp::nansum)];
}

bool is_nan_reduce_op(ReduceOp op) {
  return op >= ReduceOp::nansum && op <= ReduceOp::nanstd;
}

std::vector<unsigned char> empty_reduce_values(DType dtype, ReduceOp op, std::int64_t outputs) {
  const DType out = reduce_result_dtype(dtype, op);
  double value = 0;
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::nansum:
    case ReduceOp::count_nonzero:
      break;
    case ReduceOp::any:
      break;
    case ReduceOp::prod:
    case ReduceOp::nanprod:
    case ReduceOp::all:
      value = 1;
      break;
    default:
      if (!statistic_of(op))
        throw_invalid(std::string(reduce_op_name(op)) +
                      " of an empty array has no identity (zero-size input)");
      value = std::numeric_limits<double>::quiet_NaN();
  }
  std::vector<unsigned char> values(static_cast<std::size_t>(outputs) * dtype_size(out));
  visit_dtype(out, [&](auto t) {
    using R = decltype(t);
    const R v = static_cast<R>(value);
    for (std::int64_t o = 0; o < outputs; ++o)
      std::memcpy(values.data() + o * sizeof(R), &v, sizeof v);
  });
  return values;
}

void write_statistics(const Moments* moments, ReduceOp op, double ddof, DType result,
                      std::int64_t outputs, void* values) {
  const Statistic stat = *statistic_of(op);
  const bool nan_op = is_nan_reduce_op(op);
  visit_dtype(result, [&](auto t) {
    using R = decltype(t);
    if constexpr (is_float_type<R>) {
      for (std::int64_t o = 0; o < outputs; ++o)
        static_cast<R*>(values)[o] = static_cast<R>(finish_moments(moments[o], stat, ddof, nan_op));
    }
  });
}

void check_nan_arg_found(ReduceOp op, const std::vector<std::int64_t>& indices) {
  if (op != ReduceOp::nanargmin && op != ReduceOp::nanargmax) return;
  for (std::int64_t i : indices)
    if (i == std::numeric_limits<std::int64_t>::max())
      throw_invalid(std::string(reduce_op_name(op)) + ": All-NaN slice encountered");
}

}  // namespace detail

namespace {

// The 2-D problem of `plan` for the kernels.
detail::ReduceShape problem_of(const detail::AxesPlan& plan, DType dtype,
                               const ReduceOptions& options) {
  detail::ReduceShape s;
  s.dtype = dtype;
  s.op = options.op;
  s.axis = plan.axis;
  s.rows = plan.rows;
  s.cols = plan.cols;
  s.row_stride = plan.row_stride;
  s.col_step = plan.col_step;
  s.ddof = options.ddof;
  return s;
}

}  // namespace

struct Reducer::Impl {
  Device device;
  std::vector<std::int64_t> input_shape;
  std::vector<std::int64_t> input_strides;  // in elements, as Array::strides()
  detail::AxesPlan axes;
  detail::ReduceShape shape;                     // the 2-D problem the kernel reduces
  std::unique_ptr<detail::ReduceKernel> kernel;  // null when the extent or the result is empty
  std::vector<unsigned char> identity_values;    // what an empty extent reduces to
  std::unique_ptr<detail::Gather> gather;        // interleaved axes: input → gathered
  Buffer gathered;                               // the input with its reduced axes together
};

Reducer::Reducer(const Device& device, DType dtype, std::vector<std::int64_t> shape,
                 std::int64_t row_stride, const ReduceOptions& options)
    : Reducer(device, dtype, shape, c_order_strides(shape, row_stride), options) {}

Reducer::Reducer(const Device& device, DType dtype, std::vector<std::int64_t> shape,
                 std::vector<std::int64_t> strides, const ReduceOptions& options)
    : impl_(new Impl{device, shape, {}, {}, {}, nullptr, {}, nullptr, {}}) {
  if (shape.empty()) throw_invalid("reduce takes arrays of at least one dimension, got 0-D");
  impl_->input_strides = detail::checked_strides(shape, std::move(strides));
  detail::check_ddof(options.ddof);
  const auto& variant = detail::find_reduce_variant(device.backend(), options.variant);
  auto& s = impl_->shape;
  const detail::AxesPlan& plan = impl_->axes =
      detail::plan_reduce_axes(shape, impl_->input_strides, options, variant.reads_steps);
  s = problem_of(plan, dtype, options);
  if (s.col_step != 1 && !variant.supports(s, device.info())) {  // gathered after all
    impl_->axes = detail::plan_reduce_axes(shape, impl_->input_strides, options, false);
    s = problem_of(plan, dtype, options);
  }
  if (plan.outputs == 0) return;  // e.g. axis rows of a 0 × n array: an empty result
  if (plan.extent == 0) {
    impl_->identity_values = detail::empty_reduce_values(dtype, options.op, plan.outputs);
    return;
  }
  impl_->kernel = detail::make_reduce_kernel(device, s, options.variant);
  if (plan.gathers) {
    impl_->gather = device.impl().make_gather(plan.gather, dtype_size(dtype));
    impl_->gathered = Buffer(device, static_cast<std::size_t>(s.size()) * dtype_size(dtype));
  }
}

Reducer::~Reducer() = default;
Reducer::Reducer(Reducer&&) noexcept = default;
Reducer& Reducer::operator=(Reducer&&) noexcept = default;

std::int64_t Reducer::outputs() const {
  return impl_->axes.outputs;
}
const std::vector<std::int64_t>& Reducer::result_shape() const {
  return impl_->axes.result_shape;
}
DType Reducer::result_dtype() const {
  return reduce_result_dtype(impl_->shape.dtype, impl_->shape.op);
}

void Reducer::run(const Array& in, const Buffer& values, const Buffer& indices, Stream stream) {
  const auto& s = impl_->shape;
  if (in.dtype() != s.dtype || in.shape() != impl_->input_shape ||
      detail::checked_strides(in.shape(), in.strides()) != impl_->input_strides)
    throw_invalid("reducer was made for another array shape or dtype");
  if (&in.buffer().device().impl() != &impl_->device.impl() ||
      &values.device().impl() != &impl_->device.impl() ||
      (is_arg_op(s.op) && &indices.device().impl() != &impl_->device.impl()))
    throw_invalid("reducer of " + impl_->device.label() +
                  " was given an array or outputs of another device");
  const auto outputs = static_cast<std::size_t>(impl_->axes.outputs);
  if (values.bytes() < outputs * dtype_size(reduce_result_dtype(s.dtype, s.op)) ||
      (is_arg_op(s.op) && indices.bytes() < outputs * sizeof(std::int64_t)))
    throw_invalid("reducer outputs are too small (" + std::to_string(outputs) + " results)");
  detail::StreamScope scope(impl_->device.impl(), stream);
  if (!impl_->kernel) {
    if (!impl_->identity_values.empty())
      values.device().impl().upload(values.handle(), 0, impl_->identity_values.data(),
                                    impl_->identity_values.size());
    return;
  }
  if (impl_->gather) {
    impl_->gather->run(in.buffer().handle(), impl_->gathered.handle());
    impl_->kernel->run(impl_->gathered, values, indices);
    return;
  }
  impl_->kernel->run(in.buffer(), values, indices);
}

ReduceResult reduce(const Array& in, const ReduceOptions& options) {
  Device device = in.device();
  Reducer reducer(device, in.dtype(), in.shape(), in.strides(), options);
  ReduceResult result;
  result.dtype = reducer.result_dtype();
  result.shape = reducer.result_shape();
  auto outputs = static_cast<std::size_t>(reducer.outputs());
  Buffer values(device, outputs * dtype_size(result.dtype));
  Buffer indices(device, is_arg_op(options.op) ? outputs * sizeof(std::int64_t) : 0);
  if (in.size() > 0 && options.timed) {  // an empty input is answered from the host, untimed
    device.impl().timer_start(detail::TimerMode::events_only);
    reducer.run(in, values, indices);
    result.time_ms = device.impl().timer_stop_ms();
  } else {
    reducer.run(in, values, indices);
  }
  std::vector<unsigned char> raw(values.bytes());
  values.download(raw.data(), raw.size());
  for (std::size_t o = 0; o < outputs; ++o)
    result.values.push_back(
        Scalar::from_bytes(result.dtype, raw.data() + o * dtype_size(result.dtype)));
  if (is_arg_op(options.op)) {
    result.indices.resize(outputs);
    indices.download(result.indices.data(), outputs * sizeof(std::int64_t));
    detail::check_nan_arg_found(options.op, result.indices);
  }
  return result;
}

}  // namespace parpat
