// numpy.histogramdd for Python: the samples as the caller's memory (one (N, D) table, or D
// coordinate arrays), each dimension's bins as the package parsed them, and optional weights.
//  - histogramdd_call: counted by parpat::histogramdd on `device` once the caller's stream has
//    produced the data (bins without a range take it from the data); the counts (or weighted
//    sums) and each dimension's edges come back as numpy arrays.
//  - histogramdd_into: bins with their ranges or edges; a JointHistogrammer from the calling
//    thread's plan cache counts into the caller's memory on the caller's stream (device memory
//    is left there, host memory filled before the call returns); each dimension's edges come
//    back as numpy arrays.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "memory.hpp"
#include "parpat/parpat.hpp"
#include "plan_cache.hpp"

namespace parpat::python {

namespace nb = nanobind;

// `values` as a 1-D numpy array that owns them (a list of 65537 floats is slow to make).
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> numpy_array(std::vector<T> values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {owned->size()}, owner);
}

// One dimension's bins: (count, has_range, lo, hi, edges); non-empty edges stand for themselves.
using BinsSpec = std::tuple<std::int64_t, bool, double, double, std::vector<double>>;

// Each dimension's bins from its spec.
inline std::vector<HistogramBins> bins_of(const std::vector<BinsSpec>& specs) {
  std::vector<HistogramBins> bins;
  for (const auto& [count, has_range, lo, hi, edges] : specs) {
    if (!edges.empty())
      bins.push_back(HistogramBins::explicit_edges(edges));
    else
      bins.push_back(has_range ? HistogramBins::even(count, lo, hi) : HistogramBins::even(count));
  }
  return bins;
}

// Each dimension's edges as numpy arrays.
inline nb::list edges_of(const std::vector<HistogramBins>& bins) {
  nb::list edges;
  for (const HistogramBins& b : bins)
    edges.append(numpy_array(b.edge_values()));
  return edges;
}

// The samples as arrays: the (n, dims) table at coordinates[0] (`table`; strides: its two
// element strides, or C order when empty), or one array of n values at each coordinate (strides:
// each one's step, or 1 each when empty).
inline std::vector<Array> sample_arrays(const Device& device,
                                        const std::vector<std::uintptr_t>& coordinates, bool host,
                                        DType dtype, std::int64_t n, bool table,
                                        const std::vector<std::int64_t>& strides,
                                        std::size_t dims) {
  std::vector<Array> arrays;
  for (std::size_t k = 0; k < coordinates.size(); ++k) {
    const Memory m{coordinates[k], host};
    if (table)
      arrays.push_back(
          input_array(device, m, dtype, {n, static_cast<std::int64_t>(dims)}, strides));
    else
      arrays.push_back(input_array(device, m, dtype, {n}, {strides.empty() ? 1 : strides.at(k)}));
  }
  return arrays;
}

// The joint histogram of `n` samples of dtype `dtype_name`: `coordinates` holds the one pointer of
// an (n, D) table (`table`) or the pointers of D arrays of n values, D being the number of
// `specs`; `strides` are the table's two element strides or each array's step (empty: dense).
// `weights_dtype` empty: counts; else the float64 sums of the n weights at `weights`, which are
// `weights_step` elements apart. Returns (the counts as uint64 or the sums as float64 in C order,
// [the edges of each dimension]).
inline nb::tuple histogramdd_call(const Device& device,
                                  const std::vector<std::uintptr_t>& coordinates, bool host,
                                  const std::string& dtype_name, std::int64_t n, bool table,
                                  const std::vector<std::int64_t>& strides,
                                  const std::vector<BinsSpec>& specs, std::uintptr_t weights,
                                  bool weights_host, const std::string& weights_dtype,
                                  std::int64_t weights_step, const std::string& variant,
                                  std::uintptr_t stream) {
  const DType dtype = parse_dtype(dtype_name);
  const std::vector<HistogramBins> bins = bins_of(specs);
  HistogramOptions options;
  options.variant = variant;
  HistogramDDResult r;
  {
    nb::gil_scoped_release unlocked;
    // The library counts on the device's own stream: the caller's must have produced the data.
    if ((!host || !weights_host) && device.backend() != Backend::cpu)
      device.synchronize(stream_of(stream));
    const std::vector<Array> arrays =
        sample_arrays(device, coordinates, host, dtype, n, table, strides, specs.size());
    if (weights_dtype.empty()) {
      r = table ? histogramdd(arrays[0], bins, options) : histogramdd(arrays, bins, options);
    } else {
      const Array w = input_array(device, {weights, weights_host}, parse_dtype(weights_dtype), {n},
                                  {weights_step});
      r = table ? histogramdd(arrays[0], w, bins, options) : histogramdd(arrays, w, bins, options);
    }
  }
  nb::list edges = edges_of(r.bins);
  if (r.weighted()) return nb::make_tuple(numpy_array(std::move(r.sums)), edges);
  return nb::make_tuple(numpy_array(std::move(r.counts)), edges);
}

// The joint histogram of `n` samples into `out` (the bins + 1 values of 8 bytes: uint64 counts, or
// float64 sums of the weights, the last for the samples in no bin), every dimension's bins with
// their range or edges; the arguments as histogramdd_call's. Returns [the edges of each
// dimension].
inline nb::list histogramdd_into(const Device& device,
                                 const std::vector<std::uintptr_t>& coordinates, bool host,
                                 const std::string& dtype_name, std::int64_t n, bool table,
                                 const std::vector<std::int64_t>& strides,
                                 const std::vector<BinsSpec>& specs, std::uintptr_t weights,
                                 bool weights_host, const std::string& weights_dtype,
                                 std::int64_t weights_step, std::uintptr_t out, bool out_host,
                                 const std::string& variant, std::uintptr_t stream) {
  const DType dtype = parse_dtype(dtype_name);
  const std::vector<HistogramBins> bins = bins_of(specs);
  HistogramOptions options;
  options.variant = variant;
  const bool weighted = !weights_dtype.empty();
  const bool any_host = host || out_host || (weighted && weights_host);
  const Stream s = run_stream(device, any_host, stream);
  JointHistogrammer& plan =
      plans().joint(device, dtype, n, table, bins, options, s,
                    weighted ? std::optional<DType>(parse_dtype(weights_dtype)) : std::nullopt);
  const std::vector<Array> arrays =
      sample_arrays(device, coordinates, host, dtype, n, table, strides, specs.size());
  Output result(device, {out, out_host}, static_cast<std::size_t>(plan.slots()) * 8);
  if (weighted) {
    const Array w = input_array(device, {weights, weights_host}, parse_dtype(weights_dtype), {n},
                                {weights_step});
    nb::gil_scoped_release unlocked;
    plan.run(arrays, w, result.buffer(), s);
    result.finish();
  } else {
    nb::gil_scoped_release unlocked;
    plan.run(arrays, result.buffer(), s);
    result.finish();
  }
  return edges_of(bins);
}

}  // namespace parpat::python
