// parpat/histogram.hpp — histograms with numpy.histogram's semantics and 64-bit counts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parpat/array.hpp"

namespace parpat {

// How values map to bins (DESIGN.md §2).
//  - even: `count` bins over [lo, hi]. The edges are float64 exactly as
//    numpy.linspace(lo, hi, count + 1) makes them (edge i = i·((hi − lo)/count) + lo, the last
//    edge = hi); a value on an inner edge goes to the bin on its right, hi goes to the last bin.
//    Without a range, [min, max] of the data (numpy's default; [v − 0.5, v + 0.5] when
//    min == max, [0, 1] for empty input).
//  - edges: a strictly increasing float64 array of count + 1 edges, same rules.
//  - per_value: one bin per integer value 0, 1, ..., like numpy.bincount (integer and bool
//    input). Every non-negative value of the dtype for bool (2 bins), int8 (128), uint8 (256),
//    int16 (32768) and uint16 (65536); max + 1 of the data (found with parpat::reduce, 1 when
//    every value is negative) for int32, uint32, int64 and uint64, where max + 1 above
//    kMaxHistogramBins is an invalid_argument error; at least `minlength` bins (numpy.bincount's
//    minlength) either way. Negative values are counted as underflow.
//
// Every dtype is binned by its value as a float64, as numpy.histogram does: 64-bit integers are
// rounded to the nearest float64 first (a value beyond 2^53 that rounds onto an edge counts as
// on it), a bool is 0 or 1, a float16 or bfloat16 its exact value (NaN bits count as NaN).
// numpy 2 differs for float32 and float16 input, with or without a range: it makes edges of the
// input's type (float64 linspace edges rounded to it) and compares in that type; parpat makes
// float64 edges and compares the values in float64 as for every other dtype (numpy 1's rule), so
// a value within a rounding of an edge can count in the neighbouring bin.
struct HistogramBins {
  enum class Kind { even, edges, per_value };
  Kind kind = Kind::even;
  std::int64_t count = 10;
  bool has_range = false;
  double lo = 0, hi = 0;
  std::vector<double> edges;
  std::int64_t minlength = 0;  // per_value only: the fewest bins

  static HistogramBins even(std::int64_t count);  // range from the data
  static HistogramBins even(std::int64_t count, double lo, double hi);
  static HistogramBins explicit_edges(std::vector<double> edges);
  static HistogramBins per_value(std::int64_t minlength = 0);

  // The count + 1 float64 edges (even bins: numpy.linspace's values). Needs a range.
  std::vector<double> edge_values() const;
};

// The most bins a histogram may have (2^26: 512 MiB of 64-bit counts).
constexpr std::int64_t kMaxHistogramBins = std::int64_t{1} << 26;

struct HistogramOptions {
  std::string variant;  // empty: the backend's default (`fast` on GPUs, `parallel` on the CPU)
  // true: time the call with events of its own (time_ms); false (default): enqueue only the
  // pattern's work and leave time_ms 0.
  bool timed = false;
};

struct HistogramResult {
  HistogramBins bins;  // resolved: even with a range, or explicit edges
  std::vector<std::uint64_t> counts;
  std::uint64_t underflow = 0, overflow = 0, nan = 0;
  // A weighted histogram: the float64 sum of the weights of each bin's values (counts is then
  // empty), and of the values below the first edge, above the last and NaN.
  std::vector<double> sums;
  double underflow_sum = 0, overflow_sum = 0, nan_sum = 0;
  double time_ms = 0;  // device time of the counting (options.timed), else 0

  bool weighted() const { return !sums.empty(); }
};

// The bins `bins` stands for on the data `in`: a missing range becomes the data's [min, max]
// (found with parpat::reduce on the array's device) and per-value bins become even bins over
// [−0.5, V − 0.5]. Throws Error(invalid_argument) for bins ≤ 0 or above kMaxHistogramBins,
// lo ≥ hi, a non-finite range, edges that are not strictly increasing or not finite, per-value
// bins of float input, and per-value bins of more than kMaxHistogramBins.
HistogramBins resolve_bins(const Array& in, const HistogramBins& bins);

// numpy.histogram's density=True of a result: count (or weighted sum) / bin width / the sum of
// the bins' counts (outliers and NaN are not in that sum), in float64 and in numpy's order of
// operations, so the values of counts equal numpy's bit for bit; every value is NaN when no
// value fell in a bin (numpy's 0 / 0). Each density times its bin's width sums to 1.
std::vector<double> histogram_density(const HistogramResult& result);

// Counts the values of `in` (any shape, taken flat in C order; any dtype) on its own device. A
// strided view, or 2-D rows with gaps, is counted from a dense copy made on that device; a view of
// one step throughout (x[::s]) is read in place by `fast` on CUDA and OpenCL (but where CUDA sorts
// rows into buckets, at 2^20 bins) and the CPU's `parallel`.
HistogramResult histogram(const Array& in, const HistogramBins& bins = {},
                          const HistogramOptions& options = {});

// numpy.histogram(x, bins, weights=w) and numpy.bincount(x, w): each bin holds the float64 sum
// of the weights of its values. `weights` has the shape of `in`, is float32 or float64 (numpy
// sums other dtypes as float64 too: convert them first) and lives on in's device. The variants
// that take weights: `serial` and `parallel` on the CPU, `interleaved` and `fast` on GPUs (the
// default ones). GPU sums are added by atomics, in no fixed order, so they may differ from
// numpy's in the last bits (within n·2^-53 of the sum of |w| in the bin).
HistogramResult histogram(const Array& in, const Array& weights, const HistogramBins& bins = {},
                          const HistogramOptions& options = {});

// A histogram bound to one device, dtype, size and resolved bins, with its workspace sized
// once: run() only enqueues work and allocates nothing.
class Histogrammer {
 public:
  Histogrammer(const Device& device, DType dtype, std::int64_t n, const HistogramBins& resolved,
               const HistogramOptions& options = {});
  // A weighted plan: weights of dtype `weights` (float32 or float64), run with weights and sums.
  Histogrammer(const Device& device, DType dtype, DType weights, std::int64_t n,
               const HistogramBins& resolved, const HistogramOptions& options = {});
  ~Histogrammer();
  Histogrammer(Histogrammer&&) noexcept;
  Histogrammer& operator=(Histogrammer&&) noexcept;

  // Enqueues the histogram of `in` into `counts`: slots() uint64 values, the bins followed by
  // underflow, overflow and NaN; with `accumulate`, added to the counts already there (chunks of
  // one input, or several inputs, into one histogram). Asynchronous on GPU backends. `in` and
  // `counts` must be of the plan's device. The work goes to `stream` (default: the device's own).
  void run(const Array& in, const Buffer& counts, bool accumulate = false, Stream stream = {});
  // A weighted plan's run: `sums` holds slots() doubles (bins, underflow, overflow, NaN).
  void run(const Array& in, const Array& weights, const Buffer& sums, bool accumulate = false,
           Stream stream = {});
  bool weighted() const;
  std::int64_t bins() const;
  std::int64_t slots() const { return bins() + 3; }
  // Device memory the plan holds besides the input and the counts (tables, edges).
  std::size_t temp_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parpat
