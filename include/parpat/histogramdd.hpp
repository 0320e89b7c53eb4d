// parpat/histogramdd.hpp — joint histograms of samples in D dimensions, with
// numpy.histogramdd's and numpy.histogram2d's semantics.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "parpat/histogram.hpp"

namespace parpat {

// The most dimensions a joint histogram takes.
constexpr int kMaxHistogramDims = 8;

// A joint histogram: bin (i0, i1, ..., iD−1) counts the samples whose coordinate d lies in bin
// i_d of dimension d, under the one-dimensional rules of each dimension's bins (HistogramBins:
// float64 edges, a value on an inner edge goes right, the last edge belongs to the last bin). A
// sample outside the range of any dimension, or NaN in any coordinate, is in no bin (numpy drops
// it; here it is counted in `outside`). Every coordinate is compared as a float64, as
// numpy.histogramdd compares it.
struct HistogramDDResult {
  std::vector<HistogramBins> bins;    // resolved per dimension: even with a range, or edges
  std::vector<std::int64_t> shape;    // bins per dimension
  std::vector<std::uint64_t> counts;  // C order over `shape`; empty when weighted
  std::vector<double> sums;           // weighted: float64 sums of the weights, C order
  std::uint64_t outside = 0;          // samples in no bin
  double outside_sum = 0;             // weighted: the sum of their weights
  double time_ms = 0;                 // device time of the counting (options.timed), else 0

  bool weighted() const { return !sums.empty(); }
  std::int64_t size() const;  // the number of bins, the product of `shape`
};

// The samples, in either of numpy.histogramdd's forms:
//  - an (N, D) array: row i is sample i (N × 1 for one dimension);
//  - D one-dimensional arrays of one length: array d holds coordinate d of every sample.
// Strided views (and weights that are) are counted from dense copies made on their device.
// Every array has one dtype (any) and lives on one device, where the counting runs.
// `bins` holds one HistogramBins per dimension, or one for every dimension. Even bins without a
// range take [min, max] of their coordinate (numpy's default, with its rules for empty and
// constant data); per-value bins are refused (numpy.histogramdd has none). Throws
// Error(invalid_argument) for a dimension count outside [1, kMaxHistogramDims], more than
// kMaxHistogramBins bins in all, coordinate arrays of different lengths, dtypes or devices, and
// each dimension's bins as resolve_bins does.
HistogramDDResult histogramdd(const Array& sample, const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options = {});
HistogramDDResult histogramdd(const std::vector<Array>& coordinates,
                              const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options = {});

// Weighted: each bin holds the float64 sum of the weights of its samples (numpy's weights=).
// `weights` is a float32 or float64 array of N values on the samples' device. GPU sums are added
// by atomics in no fixed order, so they may differ from numpy's in the last bits.
HistogramDDResult histogramdd(const Array& sample, const Array& weights,
                              const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options = {});
HistogramDDResult histogramdd(const std::vector<Array>& coordinates, const Array& weights,
                              const std::vector<HistogramBins>& bins,
                              const HistogramOptions& options = {});

// A joint histogram bound to one device, sample dtype, sample count, layout (`table`: one (N, D)
// array; else D coordinate arrays) and resolved bins (each dimension's even bins with a range, or
// its edges; D = resolved.size()), counting or, with `weights` (float32 or float64), summing
// weights: made once, run() only enqueues the work and allocates nothing. Throws as histogramdd
// does, and Error(invalid_argument) for bins without a range.
class JointHistogrammer {
 public:
  JointHistogrammer(const Device& device, DType dtype, std::int64_t n, bool table,
                    const std::vector<HistogramBins>& resolved,
                    std::optional<DType> weights = std::nullopt,
                    const HistogramOptions& options = {});
  ~JointHistogrammer();
  JointHistogrammer(JointHistogrammer&&) noexcept;
  JointHistogrammer& operator=(JointHistogrammer&&) noexcept;

  // Enqueues into `out` slots() uint64 counts, or for a weighted plan float64 sums: the bins in
  // C order, then the samples in no bin. `samples`: the one (N, D) array or the D coordinate
  // arrays the plan was made for, on its device, as is `out`. The work goes to `stream`
  // (default: the device's own).
  void run(const std::vector<Array>& samples, const Buffer& out, Stream stream = {});
  void run(const std::vector<Array>& samples, const Array& weights, const Buffer& out,
           Stream stream = {});
  bool weighted() const;
  std::int64_t slots() const;  // the bins in all, + 1
  std::vector<std::int64_t> shape() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// numpy.histogramdd's density=True: each bin's count (or sum) / the product of its widths / the
// sum of every bin, in numpy's order of operations; NaN everywhere when no sample is in a bin.
std::vector<double> histogramdd_density(const HistogramDDResult& result);

}  // namespace parpat
