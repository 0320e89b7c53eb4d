// parpat._parpat: the C++ library bound for Python. The Python layer (parpat/_api.py) describes
// each array as a pointer, a dtype, a shape and element strides, on the host or on a device, and
// allocates the outputs in the caller's framework; this module turns those into parpat arrays
// (a view of the caller's memory, or a copy when host data goes to a GPU), runs a plan (a
// ReduceCall the package keeps per call signature, or one from the calling thread's plan
// cache), and leaves device results on the caller's stream. Joint histograms whose bins need the
// data's range (histogramdd_call.hpp) wait for the caller's stream and return host arrays.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "histogramdd_call.hpp"
#include "memory.hpp"
#include "parpat/parpat.hpp"
#include "parts_call.hpp"
#include "plan_cache.hpp"
#include "python_communicator.hpp"
#include "reduce_call.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace parpat::python {
namespace {

// numpy.histogram's bins on `x`: (count, lo, hi) of even bins, or the explicit edges. A missing
// range (or per-value bins) is found on the device from the data, after the caller's stream has
// finished producing it.
std::tuple<std::int64_t, double, double, std::vector<double>> resolve(
    const Device& device, Memory in, const std::string& dtype_name, Layout layout,
    const std::string& kind, std::int64_t count, bool has_range, double lo, double hi,
    std::vector<double> edges, std::uintptr_t stream) {
  HistogramBins bins = bins_of(kind, count, has_range, lo, hi, std::move(edges));
  {
    nb::gil_scoped_release unlocked;
    const bool reads_data = kind == "per_value" || (kind == "even" && !has_range);
    if (reads_data && !in.host && device.backend() != Backend::cpu)
      device.synchronize(stream_of(stream));
    bins = resolve_bins(input_array(device, in, parse_dtype(dtype_name), std::move(layout.shape),
                                    std::move(layout.strides)),
                        bins);
  }
  if (bins.kind == HistogramBins::Kind::edges) return {bins.count, 0.0, 0.0, bins.edges};
  return {bins.count, bins.lo, bins.hi, {}};
}

// Counts (uint64) of `in` into `counts`, or with `weights` (of dtype `weights_dtype`, laid out
// as `weights_layout`, of as many elements) the float64 sums of the weights: bins + 3 slots
// either way.
void histogram_into(const Device& device, Memory in, const std::string& dtype_name, Layout layout,
                    std::int64_t count, double lo, double hi, std::vector<double> edges,
                    Memory counts, bool accumulate, const std::string& variant,
                    std::uintptr_t stream, std::optional<Memory> weights = std::nullopt,
                    const std::string& weights_dtype = {}, Layout weights_layout = {}) {
  const DType dtype = parse_dtype(dtype_name);
  HistogramBins bins = edges.empty() ? HistogramBins::even(count, lo, hi)
                                     : HistogramBins::explicit_edges(std::move(edges));
  HistogramOptions o;
  o.variant = variant;
  const bool host = in.host || counts.host || (weights && weights->host);
  const Stream s = run_stream(device, host, stream);
  std::optional<DType> w_dtype;
  if (weights) w_dtype = parse_dtype(weights_dtype);
  Histogrammer& plan = plans().histogrammer(device, dtype, layout.elements(), bins, o, s, w_dtype);
  Array x = input_array(device, in, dtype, std::move(layout.shape), std::move(layout.strides));
  Output out(device, counts, static_cast<std::size_t>(plan.slots()) * 8);
  if (accumulate) out.start_from_host();
  if (weights) {
    Array w = input_array(device, *weights, *w_dtype, std::move(weights_layout.shape),
                          std::move(weights_layout.strides));
    nb::gil_scoped_release unlocked;
    plan.run(x, w, out.buffer(), accumulate, s);
    out.finish();
    return;
  }
  nb::gil_scoped_release unlocked;
  plan.run(x, out.buffer(), accumulate, s);
  out.finish();
}

// C = Σ_y f(A[x], B[y]) into `c`; A's elements are `a_step` apart, B's `b_step`.
void pairwise_into(const Device& device, Memory a, std::int64_t x, std::int64_t a_step, Memory b,
                   std::int64_t y, std::int64_t b_step, Memory c, const std::string& kernel,
                   double h, const std::string& expression, const std::string& variant,
                   std::uintptr_t stream) {
  PairwiseOptions o;
  o.kernel = expression.empty() ? parse_pairwise_kernel(kernel) : PairwiseKernel::expression;
  o.h = h;
  o.expression = expression;
  o.variant = variant;
  const Stream s = run_stream(device, a.host || b.host || c.host, stream);
  Pairwise& plan = plans().pairwise(device, x, y, o, s);
  Array av = input_array(device, a, DType::float32, {x}, {a_step});
  Array bv = input_array(device, b, DType::float32, {y}, {b_step});
  Output out(device, c, static_cast<std::size_t>(x) * sizeof(float));
  nb::gil_scoped_release unlocked;
  plan.run(av, bv, Array::view(out.buffer(), DType::float32, {x}), s);
  out.finish();
}

nb::dict info_dict(const DeviceInfo& d) {
  nb::dict out;
  out["backend"] = backend_name(d.backend);
  out["index"] = d.index;
  out["name"] = d.name;
  out["vendor"] = d.vendor;
  out["version"] = d.version;
  out["architecture"] = d.architecture;
  out["compute_units"] = d.compute_units;
  out["global_memory"] = d.global_memory;
  out["local_memory"] = d.local_memory;
  out["l2_cache"] = d.l2_cache;
  out["max_group_size"] = d.max_group_size;
  out["fp64"] = d.fp64;
  return out;
}

// Memory from Python: (pointer, on the host?).
Memory memory(std::uintptr_t ptr, bool host) {
  return {ptr, host};
}

}  // namespace
}  // namespace parpat::python

NB_MODULE(_parpat, m) {
  using namespace parpat;
  using namespace parpat::python;
  m.doc() = "parpat's C++ library; the functions to call are in the parpat package.";

  // The library's one exception, as the Python exception of its kind.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::invalid_argument:
          PyErr_SetString(PyExc_ValueError, e.what());
          break;
        case ErrorKind::unsupported:
          PyErr_SetString(PyExc_TypeError, e.what());
          break;
        default:
          PyErr_SetString(PyExc_RuntimeError, e.what());
      }
    }
  });

  nb::class_<Device>(m, "Device")
      .def_static(
          "open",
          [](const std::string& backend, int index) {
            return Device::open(parse_backend(backend), index);
          },
          "backend"_a, "index"_a = 0)
      .def_prop_ro("label", &Device::label)
      .def_prop_ro("backend",
                   [](const Device& d) { return std::string(backend_name(d.backend())); })
      .def_prop_ro("index", [](const Device& d) { return d.info().index; })
      .def_prop_ro("info", [](const Device& d) { return info_dict(d.info()); })
      .def(
          "synchronize",
          [](const Device& d, std::uintptr_t stream) {
            nb::gil_scoped_release unlocked;
            d.synchronize(stream_of(stream));
          },
          "stream"_a = 0)
      .def("__repr__", [](const Device& d) { return "parpat.Device('" + d.label() + "')"; });

  m.def("devices", [] {
    nb::list out;
    for (const auto& d : list_devices())
      out.append(info_dict(d));
    return out;
  });
  m.def("backends_built", [] {
    std::vector<std::string> out;
    for (Backend b : {Backend::cpu, Backend::cuda, Backend::opencl})
      if (backend_built(b)) out.emplace_back(backend_name(b));
    return out;
  });
  m.def("result_dtype", [](const std::string& dtype, const std::string& op) {
    return std::string(dtype_name(reduce_result_dtype(parse_dtype(dtype), parse_reduce_op(op))));
  });
  m.def(
      "clear_plans", [] { plans().clear(); }, "Drops the calling thread's cached plans.");

  nb::class_<ReduceCall>(m, "ReduceCall")
      .def(nb::init<Device, bool, const std::string&, std::vector<std::int64_t>,
                    std::vector<std::int64_t>, const std::string&, std::optional<std::vector<int>>,
                    const std::string&, double, std::uintptr_t>(),
           "device"_a, "host"_a, "dtype"_a, "shape"_a, "strides"_a, "op"_a, "axes"_a.none(),
           "variant"_a, "ddof"_a, "first_stream"_a)
      .def(
          "run",
          [](ReduceCall& call, std::uintptr_t in, std::uintptr_t out, std::uintptr_t stream) {
            if (!call.waits()) return call.run(in, out, stream);  // a launch: the GIL is kept
            nb::gil_scoped_release unlocked;
            call.run(in, out, stream);
          },
          "in_ptr"_a, "out_ptr"_a, "stream"_a);
  m.def(
      "resolve_bins",
      [](const Device& d, std::uintptr_t ptr, bool host, const std::string& dtype,
         std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
         const std::string& kind, std::int64_t count, bool has_range, double lo, double hi,
         std::vector<double> edges, std::uintptr_t stream) {
        return resolve(d, memory(ptr, host), dtype, {std::move(shape), std::move(strides)}, kind,
                       count, has_range, lo, hi, std::move(edges), stream);
      },
      "device"_a, "ptr"_a, "host"_a, "dtype"_a, "shape"_a, "strides"_a, "kind"_a, "count"_a,
      "has_range"_a, "lo"_a, "hi"_a, "edges"_a, "stream"_a);
  m.def("edges", [](std::int64_t count, double lo, double hi) {
    // numpy.histogram's edges of even bins.
    return numpy_array(HistogramBins::even(count, lo, hi).edge_values());
  });
  m.def(
      "histogram",
      [](const Device& d, std::uintptr_t ptr, bool host, const std::string& dtype,
         std::vector<std::int64_t> shape, std::vector<std::int64_t> strides, std::int64_t count,
         double lo, double hi, std::vector<double> edges, std::uintptr_t out, bool out_host,
         bool accumulate, const std::string& variant, std::uintptr_t stream) {
        histogram_into(d, memory(ptr, host), dtype, {std::move(shape), std::move(strides)}, count,
                       lo, hi, std::move(edges), memory(out, out_host), accumulate, variant,
                       stream);
      },
      "device"_a, "ptr"_a, "host"_a, "dtype"_a, "shape"_a, "strides"_a, "count"_a, "lo"_a, "hi"_a,
      "edges"_a, "out"_a, "out_host"_a, "accumulate"_a, "variant"_a, "stream"_a);
  m.def(
      "weighted_histogram",
      [](const Device& d, std::uintptr_t ptr, bool host, const std::string& dtype,
         std::vector<std::int64_t> shape, std::vector<std::int64_t> strides, std::uintptr_t weights,
         bool weights_host, const std::string& weights_dtype,
         std::vector<std::int64_t> weights_shape, std::vector<std::int64_t> weights_strides,
         std::int64_t count, double lo, double hi, std::vector<double> edges, std::uintptr_t out,
         bool out_host, bool accumulate, const std::string& variant, std::uintptr_t stream) {
        histogram_into(d, memory(ptr, host), dtype, {std::move(shape), std::move(strides)}, count,
                       lo, hi, std::move(edges), memory(out, out_host), accumulate, variant, stream,
                       memory(weights, weights_host), weights_dtype,
                       {std::move(weights_shape), std::move(weights_strides)});
      },
      "device"_a, "ptr"_a, "host"_a, "dtype"_a, "shape"_a, "strides"_a, "weights"_a,
      "weights_host"_a, "weights_dtype"_a, "weights_shape"_a, "weights_strides"_a, "count"_a,
      "lo"_a, "hi"_a, "edges"_a, "out"_a, "out_host"_a, "accumulate"_a, "variant"_a, "stream"_a);
  m.def("histogramdd", &histogramdd_call, "device"_a, "coordinates"_a, "host"_a, "dtype"_a, "n"_a,
        "table"_a, "strides"_a, "bins"_a, "weights"_a, "weights_host"_a, "weights_dtype"_a,
        "weights_step"_a, "variant"_a, "stream"_a);
  m.def("histogramdd_into", &histogramdd_into, "device"_a, "coordinates"_a, "host"_a, "dtype"_a,
        "n"_a, "table"_a, "strides"_a, "bins"_a, "weights"_a, "weights_host"_a, "weights_dtype"_a,
        "weights_step"_a, "out"_a, "out_host"_a, "variant"_a, "stream"_a);
  m.def(
      "pairwise",
      [](const Device& d, std::uintptr_t a, bool a_host, std::int64_t x, std::int64_t a_step,
         std::uintptr_t b, bool b_host, std::int64_t y, std::int64_t b_step, std::uintptr_t c,
         bool c_host, const std::string& kernel, double h, const std::string& expression,
         const std::string& variant, std::uintptr_t stream) {
        pairwise_into(d, memory(a, a_host), x, a_step, memory(b, b_host), y, b_step,
                      memory(c, c_host), kernel, h, expression, variant, stream);
      },
      "device"_a, "a"_a, "a_host"_a, "x"_a, "a_step"_a, "b"_a, "b_host"_a, "y"_a, "b_step"_a, "c"_a,
      "c_host"_a, "kernel"_a, "h"_a, "expression"_a, "variant"_a, "stream"_a);

  // One array in parts on several devices (parpat.Parts).
  auto parts_input = [](std::vector<Device> devices, std::vector<std::uintptr_t> pointers,
                        std::vector<bool> host, std::vector<std::uintptr_t> streams,
                        const std::string& dtype, std::vector<std::vector<std::int64_t>> shapes) {
    return PartsInput{std::move(devices), std::move(pointers), std::move(host),
                      std::move(streams), std::move(shapes),   parse_dtype(dtype)};
  };
  // An mpi4py communicator's adapter (parpat._mpi), or None for one thread rank per part.
  auto outer_of = [](const nb::object& comm) {
    return comm.is_none() ? std::optional<PythonCommunicator>()
                          : std::optional<PythonCommunicator>(comm);
  };
  m.def(
      "reduce_parts",
      [parts_input, outer_of](std::vector<Device> devices, std::vector<std::uintptr_t> pointers,
                              std::vector<bool> host, std::vector<std::uintptr_t> streams,
                              const std::string& dtype,
                              std::vector<std::vector<std::int64_t>> shapes, const std::string& op,
                              std::optional<std::vector<int>> axes, bool keepdims, double ddof,
                              const std::string& variant, nb::object comm) {
        std::optional<PythonCommunicator> outer = outer_of(comm);
        return reduce_parts(parts_input(std::move(devices), std::move(pointers), std::move(host),
                                        std::move(streams), dtype, std::move(shapes)),
                            outer ? &*outer : nullptr, op, std::move(axes), keepdims, ddof,
                            variant);
      },
      "devices"_a, "pointers"_a, "host"_a, "streams"_a, "dtype"_a, "shapes"_a, "op"_a,
      "axes"_a.none(), "keepdims"_a, "ddof"_a, "variant"_a, "comm"_a.none());
  m.def(
      "histogram_parts",
      [parts_input, outer_of](
          std::vector<Device> devices, std::vector<std::uintptr_t> pointers, std::vector<bool> host,
          std::vector<std::uintptr_t> streams, const std::string& dtype,
          std::vector<std::vector<std::int64_t>> shapes, const std::string& kind,
          std::int64_t count, bool has_range, double lo, double hi, std::vector<double> edges,
          const std::string& variant, nb::object comm) {
        std::optional<PythonCommunicator> outer = outer_of(comm);
        return histogram_parts(parts_input(std::move(devices), std::move(pointers), std::move(host),
                                           std::move(streams), dtype, std::move(shapes)),
                               outer ? &*outer : nullptr, kind, count, has_range, lo, hi,
                               std::move(edges), variant);
      },
      "devices"_a, "pointers"_a, "host"_a, "streams"_a, "dtype"_a, "shapes"_a, "kind"_a, "count"_a,
      "has_range"_a, "lo"_a, "hi"_a, "edges"_a, "variant"_a, "comm"_a.none());

  // Arrays that arrive only through DLPack (JAX and others): their pointer, dtype, shape,
  // strides (in elements) and device, read through nanobind's DLPack import.
  m.def("dlpack_describe", [](nb::ndarray<nb::ro> a) {
    std::vector<std::int64_t> shape, strides;
    for (size_t i = 0; i < a.ndim(); ++i) {
      shape.push_back(static_cast<std::int64_t>(a.shape(i)));
      strides.push_back(a.stride(i));
    }
    const auto t = a.dtype();
    return std::make_tuple(reinterpret_cast<std::uintptr_t>(a.data()), int(t.code), int(t.bits),
                           shape, strides, a.device_type(), a.device_id());
  });
}
