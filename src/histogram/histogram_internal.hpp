// What the histogram dispatch and its backends share: the resolved problem, the exact bin rule
// (the one every variant must reproduce), the kernel interface and the variant tables.
//
// Kernels count into "slots": bins 0 .. N−1, then underflow (N), overflow (N + 1), NaN (N + 2),
// so out-of-range values are just three more bins.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "parpat/histogram.hpp"
#include "parpat/registry.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat::detail {

// Every dtype is binned by its value as a float64 (numpy.histogram's rule; 64-bit integers round
// to the nearest float64). bool, int8, uint8, int16, uint16, float16 and bfloat16 ("table
// types") are read as the unsigned integer of their width, and a value → slot table over those
// bits does the rest, so their kernels are the uint8 and uint16 ones.
inline bool is_table_dtype(DType t) {
  return dtype_size(t) <= 2;
}

// The value of a table type's element from its bits: two's complement for int8 and int16, 0 or
// 1 for bool (any non-zero byte is true), the 16-bit floats decoded exactly (NaN stays NaN).
PARPAT_HOST_DEVICE inline double table_value(DType t, unsigned bits) {
  switch (t) {
    case DType::boolean:
      return bits != 0 ? 1.0 : 0.0;
    case DType::int8:
      return static_cast<double>(static_cast<std::int8_t>(bits));
    case DType::int16:
      return static_cast<double>(static_cast<std::int16_t>(bits));
    case DType::float16:
      return static_cast<double>(float16::from_bits(static_cast<std::uint16_t>(bits)));
    case DType::bfloat16:
      return static_cast<double>(bfloat16::from_bits(static_cast<std::uint16_t>(bits)));
    default:
      return static_cast<double>(bits);
  }
}

// The element type kernels are built for: a table type as the unsigned integer of its width,
// every other dtype as itself.
template <class T>
struct KernelElement {
  using type = T;
};
template <>
struct KernelElement<bool> {
  using type = std::uint8_t;
};
template <>
struct KernelElement<std::int8_t> {
  using type = std::uint8_t;
};
template <>
struct KernelElement<std::int16_t> {
  using type = std::uint16_t;
};
template <>
struct KernelElement<float16> {
  using type = std::uint16_t;
};
template <>
struct KernelElement<bfloat16> {
  using type = std::uint16_t;
};
template <class T>
using kernel_element_t = typename KernelElement<T>::type;

struct HistogramProblem {
  DType dtype = DType::float32;
  std::int64_t n = 0;
  bool weighted = false;           // sums of weights per slot instead of counts
  DType weights = DType::float64;  // the weights' dtype (float32 or float64) when weighted
  bool even = true;                // even bins over [lo, hi]; otherwise explicit `edges`
  std::int64_t bins = 0;
  double lo = 0, hi = 0;
  std::vector<double> edges;  // explicit edges only (bins + 1 values)

  std::int64_t slots() const { return bins + 3; }
  double step() const { return (hi - lo) / static_cast<double>(bins); }
};

// Edge i of even bins, as numpy.linspace computes it: i·step + lo, rounded twice (no fused
// multiply-add), and the last edge is hi itself.
inline double even_edge(const HistogramProblem& p, std::int64_t i) {
  if (i == p.bins) return p.hi;
  double scaled = static_cast<double>(i) * p.step();
  return scaled + p.lo;
}

// The slot of value x: the largest bin i with edge[i] ≤ x (so inner-edge values go right),
// the last bin for x == hi; underflow, overflow and NaN after the bins. A plain binary search
// over the float64 edges, written for clarity: this is the rule, the variants are checked
// against it.
inline std::int64_t reference_slot(const HistogramProblem& p, double x) {
  if (std::isnan(x)) return p.bins + 2;
  double first = p.even ? p.lo : p.edges.front();
  double last = p.even ? p.hi : p.edges.back();
  if (x < first) return p.bins;
  if (x > last) return p.bins + 1;
  std::int64_t below = 0, above = p.bins;  // edge(below) ≤ x; answer in [below, above)
  while (above - below > 1) {
    std::int64_t mid = below + (above - below) / 2;
    double edge = p.even ? even_edge(p, mid) : p.edges[static_cast<std::size_t>(mid)];
    if (edge <= x) {
      below = mid;
    } else {
      above = mid;
    }
  }
  return below;
}

// A slot's row, the order in which `fast`'s rules place values by clamping: 0 below the range,
// 1 + b for bin b, then above the range and NaN at their slots.
inline std::int64_t row_of_slot(std::int64_t slot, std::int64_t bins) {
  return slot == bins ? 0 : (slot < bins ? slot + 1 : slot);
}

// The slot of a row (row_of_slot undone); `hi_row`: the 16-bit rule's row for hi (Even16Rule),
// bins + 1, goes to the last bin and the rows past it one slot back.
PARPAT_HOST_DEVICE inline std::uint32_t slot_of_row(std::uint32_t row, std::uint32_t bins,
                                                    bool hi_row = false) {
  if (row == 0) return bins;
  if (row <= bins) return row - 1;
  return hi_row ? (row == bins + 1 ? bins - 1 : row - 1) : row;
}

// The rows between neighbouring bfloat16 values at the top of an even range, as a power of two
// (0 under two rows, and for other input): its 128 values an octave crowd rows that far apart
// (16 over [0, 1) in 4096 bins), which permuted rows spread over the banks only if the bits they
// xor in reach that high (CUDA's StripedRows); in 8 columns CUDA's skewed rows and OpenCL's odd
// stride of padded rows spread them where they lie at least 4 apart.
inline unsigned crowded_row_gap_log2(const HistogramProblem& p) {
  if (p.dtype != DType::bfloat16 || !p.even) return 0;
  const double top = std::max(std::fabs(p.lo), std::fabs(p.hi));
  int exponent = std::ilogb(top);                    // top in [2^e, 2^(e+1))
  if (std::ldexp(1.0, exponent) == top) --exponent;  // values below 2^e lie in the octave below
  const double gap = std::ldexp(1.0, exponent - 7) / p.step();
  unsigned log2 = 0;
  while (log2 < 24 && std::ldexp(1.0, int(log2) + 1) <= gap)
    ++log2;
  return log2;
}

// The even-bin rule at speed: a candidate bin from (x − lo)·(N / (hi − lo)), as numpy computes
// it, then moved until edge[c] ≤ x < edge[c + 1] holds for the exact float64 edges, so the
// answer is reference_slot's whatever the rounding of the candidate.
struct EvenRule {
  std::int64_t bins;
  double lo, hi, step, norm;

  explicit EvenRule(const HistogramProblem& p)
      : bins(p.bins),
        lo(p.lo),
        hi(p.hi),
        step(p.step()),
        norm(static_cast<double>(p.bins) / (p.hi - p.lo)) {}

  double edge(std::int64_t i) const {
    double scaled = static_cast<double>(i) * step;
    return scaled + lo;
  }
  std::int64_t slot(double x) const {
    if (!(x >= lo)) return std::isnan(x) ? bins + 2 : bins;
    if (x > hi) return bins + 1;
    double t = (x - lo) * norm;
    std::int64_t c = t < static_cast<double>(bins) ? static_cast<std::int64_t>(t) : bins - 1;
    while (c > 0 && x < edge(c))
      --c;
    while (c < bins - 1 && x >= edge(c + 1))
      ++c;
    return c;
  }
};

// The even-bin rule for float32 input in float32 arithmetic, exact all the same. The candidate
// t = (x − lo)·N/(hi − lo) in float differs from the exact real value by less than `delta`
// (bounded on the host from the float rounding of lo, of the difference and of the product, and
// from how far the float64 edges sit from their ideal places), so when t's fractional part lies
// in (delta, 1 − delta) the bin is floor(t). Otherwise — rare for spread data, always for a value
// on an edge — the candidate is corrected against the float thresholds: threshold[i] is the
// smallest float ≥ edge i, so for float x, x ≥ edge i ⟺ x ≥ threshold[i]. The range checks use
// the same trick (lo_up: smallest float ≥ lo; hi_down: largest float ≤ hi). Where t is exact for
// every value of the dtype (a power-of-two norm and integer input or float16, or float32 and
// bfloat16 from 0 where the device keeps subnormals: exact_arithmetic in reference.cpp), delta is
// −1: values on an edge, common for such data, need no correction.
struct FloatEvenRule {
  int bins = 0;
  // delta: a multiple of 2^-24, or −1 under exact arithmetic.
  float lo_up = 0, hi_down = 0, lo = 0, norm = 0, delta = 1;
  bool usable = false;  // false when the bound is too loose or the range is beyond float

  // ieee_subnormals: the kernels' float arithmetic keeps subnormals (CUDA without -ftz), which
  // lets float32 and bfloat16 take exact arithmetic.
  explicit FloatEvenRule(const HistogramProblem& p, bool ieee_subnormals = false);
  FloatEvenRule() = default;

  // The slot of x without branches when `exact` comes back true; otherwise a candidate that
  // corrected() settles. Kernels correct the rare inexact values of a whole vector at once.
  PARPAT_HOST_DEVICE std::uint32_t quick(float x, bool& exact) const {
#if defined(__CUDA_ARCH__)
    float t = __fmul_rn(__fsub_rn(x, lo), norm);
#else
    float t = (x - lo) * norm;
#endif
    bool inside = (x >= lo_up) & (x <= hi_down);
    t = inside ? (t > 0.0f ? t : 0.0f) : 0.0f;  // NaN and infinities never reach the floor
#if defined(__CUDA_ARCH__)
    // floor(t) for 0 ≤ t < 2^23 without the conversion unit: adding 2^23 rounded toward zero
    // leaves floor(t) in the low mantissa bits.
    float shifted = __fadd_rz(t, 8388608.0f);
    int c = __float_as_int(shifted) - 0x4B000000;
    float frac = __fsub_rn(t, __fsub_rn(shifted, 8388608.0f));
#else
    int c = int(t);  // bins ≤ 2^22, so t fits
    float frac = t - float(c);
#endif
    exact = (!inside) | ((unsigned(c) < unsigned(bins)) & (frac > delta) & (frac < 1.0f - delta));
    unsigned outside = x < lo_up ? unsigned(bins) : (x > hi_down ? bins + 1u : bins + 2u);
    return inside ? unsigned(c) : outside;
  }

  // The slot of in-range x from any candidate c: moved until threshold[c] ≤ x < threshold[c+1].
  PARPAT_HOST_DEVICE std::uint32_t corrected(float x, int c, const float* thresholds) const {
    c = c < 0 ? 0 : (c > bins - 1 ? bins - 1 : c);
    while (c > 0 && x < thresholds[c])
      --c;
    while (c < bins - 1 && x >= thresholds[c + 1])
      ++c;
    return std::uint32_t(c);
  }

  // The slot of x; `thresholds` holds bins + 1 floats (float_thresholds()).
  PARPAT_HOST_DEVICE std::uint32_t slot(float x, const float* thresholds) const {
    bool exact = false;
    std::uint32_t s = quick(x, exact);
    return exact ? s : corrected(x, int(s), thresholds);
  }
};

// The even-bin rule in integer arithmetic alone, for 4- and 8-byte integers (int32, uint32,
// int64, uint64) when the bins have a power-of-two width 2^(right − left) and the range has
// integer ends within ±2^24 (so every difference below fits an int): x is clamped, in its own
// type, to [lo − 1, hi + 1] (each end held to the dtype's range: an unsigned dtype has no value
// below 0), and its row — the float rule's order: 0 below the range, 1 + b for bin b, bins + 1
// above — is ((x − lo)·2^left >> right) + 1 clamped to [0, bins + 1], less one for hi itself,
// which numpy puts in the last bin. Exact by construction: the edges lo + i·2^(right − left) are
// integers or integer fractions, the shift floors toward −∞, and every value numpy's float64
// conversion rounds (beyond 2^53) lies far outside the range either way. (16-bit input takes
// Even16Rule.)
struct IntegerShiftRule {
  int lo = 0, hi = 0, bins = 0;
  int left = 0, right = 0;   // one of them is 0
  int below = 0, above = 0;  // x clamped to [below, above]: lo − 1 and hi + 1 in the dtype
  std::uint32_t scale = 1, offset = 1;  // 2^left and 2^right − lo·2^left
  bool usable = false;

  explicit IntegerShiftRule(const HistogramProblem& p);
  IntegerShiftRule() = default;

  template <class T>
  PARPAT_HOST_DEVICE std::uint32_t row(T x) const {
    // Clamped in T first, then narrowed: a min and a max of T, which vector units have.
    T clamped = x < static_cast<T>(below) ? static_cast<T>(below) : x;
    clamped = clamped > static_cast<T>(above) ? static_cast<T>(above) : clamped;
    const int c = static_cast<int>(clamped);
    // ((c − lo)·2^left >> right) + 1 as (c·2^left + 2^right − lo·2^left) >> right: one
    // multiply-add and a shift (CUDA, int32 at 65536 bins: 1.05x), in 32-bit unsigned
    // arithmetic, which wraps back to the same small value (|c − lo|·2^left < 2^26).
    int r = static_cast<int>(static_cast<std::uint32_t>(c) * scale + offset) >> right;
    // A min and a max: the nested form compiled to three instructions (CUDA, int32 at 2^20
    // bins: the bucket sort 611 -> 586 µs).
    r = r > bins + 1 ? bins + 1 : r;
    r = r < 0 ? 0 : r;
    return static_cast<std::uint32_t>(r - (c == hi));
  }
};

// The even-bin rule for 16-bit input (int16, uint16, float16, bfloat16) in one float multiply-add,
// with no exactness test per value. x, decoded to float (exact for each of these dtypes), gives
// t = x·scale − lo·scale, and its row — the float rule's order: 0 below the range, 1 + b for bin b,
// bins + 1 above it, bins + 2 for NaN — is floor(t) + 1 of t clamped to [−0.5, bins + 0.5]. hi
// itself takes the last bin (numpy's last bin is closed): where no other value of the dtype lies
// within a bin's width above hi (bfloat16 and float16 over [0, 1] and the like), by a row of its
// own (hi_row: t clamped to [−0.5, bins + 1.5] puts hi alone at bins + 1, the values above it at
// bins + 2 and NaN at bins + 3; slot_of_row sends the row's count to the last bin as it leaves
// the counters), else by a closing test per value. −lo·scale is split into an integer `whole` and a
// `fraction`: u = x·scale + fraction is rounded once (fine next to x = 0, where an edge often
// sits), and floor(u + whole) is exact in one add rounded toward zero. The host checks the rule
// once: the rows and the reference's slots both rise with x (hi apart), so they agree on all 65536
// values once they agree on the values either side of every edge, the dtype's ends, hi's
// neighbours and NaN; the rule is usable only where they all do (up to 16384 bins: the check's
// cost grows with them). The hi row spares the test's compare and select a value (H200, 2^29
// float16 and bfloat16 values at 1024 and 4096 bins, the test dropped in the same call: 3-9 % on
// CUDA, 0-12 % on NVIDIA's OpenCL; histogram-even16-hi-row).
struct Even16Rule {
  static constexpr std::int64_t kMaxBins = 16384;
  float scale = 0, fraction = 0;
  float low = 0, high = 0;  // u clamped to [low, high]: t to [−0.5, bins + 0.5] (+ 1 with hi_row)
  float shift = 0;          // 2^23 + 1 + whole
  float hi = 0;             // hi where the closing test is needed, else NaN
  int bins = 0, whole = 0;
  bool hi_row = false;  // hi has a row of its own, bins + 1
  bool usable = false;

  explicit Even16Rule(const HistogramProblem& p);
  Even16Rule() = default;

  // The rows values are placed in: bins + 3, one more with the hi row.
  PARPAT_HOST_DEVICE std::uint32_t rows() const {
    return static_cast<std::uint32_t>(bins) + 3u + hi_row;
  }

  // kNaN false: x is never NaN (integer input); kHi false: hi is NaN (no value needs the closing
  // test). Each drops a step that could not change the row.
  template <bool kNaN = true, bool kHi = true>
  PARPAT_HOST_DEVICE std::uint32_t row(float x) const {
#if defined(__CUDA_ARCH__)
    // NaN stays NaN through the clamp, and floor(u + whole) + 1 comes from the low bits of
    // u + 2^23 + 1 + whole rounded toward zero; a NaN's bits, read as unsigned, exceed every row.
    float u = __fmaf_rn(x, scale, fraction);
    asm("min.NaN.f32 %0, %0, %1;" : "+f"(u) : "f"(high));
    asm("max.NaN.f32 %0, %0, %1;" : "+f"(u) : "f"(low));
    unsigned r = __float_as_uint(__fadd_rz(u, shift)) - 0x4B000000u;
    if constexpr (kNaN) r = min(r, rows() - 1);
#else
    const float u = std::fma(x, scale, fraction);
    const auto r = std::isnan(u)
                       ? rows() - 1
                       : static_cast<std::uint32_t>(
                             static_cast<int>(std::floor(std::clamp(u, low, high))) + whole + 1);
#endif
    if constexpr (kHi) return x == hi ? static_cast<std::uint32_t>(bins) : r;
    return r;
  }
};

// The even-bin rule for float64 input in float64 arithmetic (CUDA `fast`), in the float rule's
// rows: 0 below the range, 1 + b for bin b, bins + 1 above it. t = (x − lo)·norm differs from
// the exact (x − lo)·N/(hi − lo) by at most 3.01·(N + 1)·2^-53 wherever it matters (the rounding
// of the difference, of norm and of the product; lo is exact), and the float64 edges sit within
// (|lo| + |hi|)·2^-50 of their ideal places, norm times that in units of t: `delta` bounds both,
// a multiple of 2^-52 so that 1 − delta is exact. The row is floor(t) + 1 of t clamped to
// [−0.5, bins + 0.5], exact when t's fraction lies in (delta, 1 − delta) and t is not bins: a
// value below the range has t < 0 (the roundings keep the sign; a product that underflows to
// −0 has fraction 0), one above it t > bins − delta, and NaN fails both tests. The rest —
// values on or next to an edge, hi, NaN — are settled against the edges (EvenRule). Where t is
// computed without rounding (lo = 0, a power-of-two bin width of at most 1) delta is −1: only
// hi and NaN are settled.
struct Float64EvenRule {
  double lo = 0, norm = 0, delta = 1;
  int bins = 0;
  bool usable = false;

  explicit Float64EvenRule(const HistogramProblem& p);
  Float64EvenRule() = default;

  PARPAT_HOST_DEVICE std::uint32_t row(double x, bool& exact) const {
#if defined(__CUDA_ARCH__)
    const double t = __dmul_rn(__dsub_rn(x, lo), norm);
#else
    const double t = (x - lo) * norm;
#endif
    const double top = bins + 0.5;
    const double clamped = t < -0.5 ? -0.5 : (t > top ? top : t);  // NaN stays NaN
#if defined(__CUDA_ARCH__)
    // floor(t) + 1 without the conversion unit: t + 2^52 + 1 rounded toward zero leaves it in
    // the low word.
    constexpr double kShift = 4503599627370497.0;  // 2^52 + 1
    const double shifted = __dadd_rz(clamped, kShift);
    const auto row = static_cast<std::uint32_t>(__double2loint(shifted));
    const double floor = __dsub_rn(shifted, kShift);
#else
    const double floor = std::floor(clamped);
    const auto row = static_cast<std::uint32_t>(static_cast<std::int64_t>(floor) + 1);
#endif
    const double frac = clamped - floor;
    exact = (frac > delta) & (frac < 1.0 - delta) & (clamped != static_cast<double>(bins));
    return row;
  }
};

// threshold[i] = the smallest float ≥ even edge i, for i in [0, bins].
std::vector<float> float_thresholds(const HistogramProblem& p);

// Value → slot for every bit pattern of a table type (256 or 65536 entries, indexed by the
// element's bits): the fastest bin rule for small integer types, exact because the reference
// fills it.
std::vector<std::uint32_t> slot_table(const HistogramProblem& p);

// One variant bound to one problem on one device; construction sizes its workspace once.
// run() enqueues the counting of `in` into `counts` (slots() uint64): zeroed first, or with
// `accumulate` added to the counts already there. `in` holds the values in[0], in[step], ...;
// step is 1 unless the kernel reads_steps().
class HistogramKernel {
 public:
  virtual ~HistogramKernel() = default;
  virtual bool reads_steps() const { return false; }
  virtual void run(const Buffer& in, std::int64_t step, const Buffer& counts, bool accumulate) = 0;
  virtual std::size_t temp_bytes() const { return 0; }
};

// A weighted histogram's variant bound to one problem: run() enqueues the float64 sums of the
// weights of each slot's values into `sums` (slots() doubles), zeroed first or, with
// `accumulate`, added to the sums already there. The order of the additions is the variant's
// (atomics on GPUs), so sums may differ from the reference's in the last bits.
class WeightedHistogramKernel {
 public:
  virtual ~WeightedHistogramKernel() = default;
  virtual void run(const Buffer& in, const Buffer& weights, const Buffer& sums,
                   bool accumulate) = 0;
  virtual std::size_t temp_bytes() const { return 0; }
};

using MakeWeightedHistogram = std::unique_ptr<WeightedHistogramKernel> (*)(
    const Device& device, const HistogramProblem& problem);

struct HistogramVariant {
  VariantInfo info;
  bool (*supports)(const HistogramProblem& problem, const DeviceInfo& device);
  std::unique_ptr<HistogramKernel> (*make)(const Device& device, const HistogramProblem& problem);
  MakeWeightedHistogram make_weighted = nullptr;  // null: the variant takes no weights
};

// The weighted variants of each backend (histogram/*weighted*): `serial` and `parallel` on the
// CPU, `interleaved` (global float64 atomics) and `fast` (shared float64 sums) on the GPUs.
std::unique_ptr<WeightedHistogramKernel> make_cpu_weighted_serial(const Device& device,
                                                                  const HistogramProblem& p);
std::unique_ptr<WeightedHistogramKernel> make_cpu_weighted_parallel(const Device& device,
                                                                    const HistogramProblem& p);
std::unique_ptr<WeightedHistogramKernel> make_cuda_weighted_interleaved(const Device& device,
                                                                        const HistogramProblem& p);
std::unique_ptr<WeightedHistogramKernel> make_cuda_weighted_fast(const Device& device,
                                                                 const HistogramProblem& p);
std::unique_ptr<WeightedHistogramKernel> make_opencl_weighted_interleaved(
    const Device& device, const HistogramProblem& p);
std::unique_ptr<WeightedHistogramKernel> make_opencl_weighted_fast(const Device& device,
                                                                   const HistogramProblem& p);

std::vector<HistogramVariant> cpu_histogram_variants();
std::vector<HistogramVariant> cuda_histogram_variants();
std::vector<HistogramVariant> opencl_histogram_variants();

const HistogramVariant& find_histogram_variant(Backend backend, const std::string& name);

// The CPU reference: counts[slots()] of `in` (n elements of p.dtype), one value at a time.
void histogram_reference(const void* in, const HistogramProblem& p, std::uint64_t* counts);
// The weighted reference: sums[slots()] of the float64 weights (p.weights) of each slot's
// values, added one at a time in input order (numpy.bincount's order).
void weighted_histogram_reference(const void* in, const void* weights, const HistogramProblem& p,
                                  double* sums);
// The weight of element i as a float64.
inline double weight_at(const void* weights, DType dtype, std::int64_t i) {
  return dtype == DType::float32 ? static_cast<double>(static_cast<const float*>(weights)[i])
                                 : static_cast<const double*>(weights)[i];
}

// The problem of resolved bins on n values of `dtype`; throws Error(invalid_argument) for bins
// that are not resolved or not valid (a bin count beyond kMaxHistogramBins, a range that is not
// finite or not increasing, edges that are not finite or not strictly increasing).
HistogramProblem problem_of(DType dtype, std::int64_t n, const HistogramBins& resolved);

// [min, max] of non-empty data, from the reduce pattern, as float64 (numpy's edges of an integer
// range: the extremes rounded to the nearest float64).
std::pair<double, double> data_range(const Array& in);
// resolve_bins's rules on input known by its dtype and size: `data_range()` gives the data's
// [min, max] (finite or not) when the bins need it (bins_need_data), and only then is called.
HistogramBins resolve_bins_with(DType dtype, std::int64_t n, const HistogramBins& bins,
                                const std::function<std::pair<double, double>()>& data_range);
bool bins_need_data(DType dtype, const HistogramBins& bins);

// The number of count slots of resolved bins: bins + 3.
std::size_t histogram_slots(const HistogramBins& resolved);
// The result of counts in slots (bins, underflow, overflow, NaN) of `resolved` bins.
HistogramResult histogram_of_slots(const HistogramBins& resolved, std::vector<std::uint64_t> slots);
// The same in place: `r.counts` holds every slot, and its three outlier slots move into r.
void take_outlier_slots(HistogramResult& r);
// The weighted result of sums in slots.
HistogramResult histogram_of_sums(const HistogramBins& resolved, std::vector<double> slots);
// Throws unless `weights` can weigh `values`: the same shape, float32 or float64.
void check_weights(DType weights, const std::vector<std::int64_t>& weights_shape,
                   const std::vector<std::int64_t>& values_shape);

}  // namespace parpat::detail
