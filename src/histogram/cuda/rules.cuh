// How a CUDA histogram kernel maps a value to a slot (bins, then underflow, overflow and NaN):
// the bits → slot table of 1- and 2-byte input (filled on the host by the reference, so exact), the
// even rule (a float64 candidate (x − lo)·N/(hi − lo) corrected against the exact edges
// i·step + lo, computed with __dmul_rn/__dadd_rn so no FMA changes an edge), a binary search over
// explicit edges, the float32 even rule of `fast` (float arithmetic, exact through a proven error
// bound, the rare value near an edge settled against the float64 edges) and 1-byte input per value.
#pragma once

#include <cuda_fp16.h>

#include <cmath>
#include <type_traits>

#include "histogram/histogram_internal.hpp"
#include "parpat/cuda/histogram.cuh"

namespace parpat::detail {
// Private to the histogram's CUDA units (cuda.cu, cuda_weighted.cu).
namespace {

#if defined(__CUDA_FTZ) && __CUDA_FTZ
#error "the float rules take float32 and bfloat16 as exact only where subnormals are kept (no -ftz)"
#endif
// The kernels' float arithmetic keeps subnormals (FloatEvenRule's exact arithmetic relies on it).
constexpr bool kIeeeSubnormals = true;
constexpr unsigned kNone = 0xFFFFFFFFu;              // a lane with no value to count
constexpr long long kMaxValuesPerBlock = 1ll << 30;  // keeps 32-bit shared counts from wrapping

struct TableRule {
  const unsigned* table;
  template <class T>
  __device__ unsigned slot(T x) const {
    return table[x];  // a generic load: the fast kernel points it at a shared copy
  }
};

struct EvenRuleDevice {
  long long bins;
  double lo, hi, step, norm;
  __device__ double edge(long long i) const { return __dadd_rn(__dmul_rn(double(i), step), lo); }
  template <class T>
  __device__ unsigned slot(T value) const {
    double x = double(value);
    if (!(x >= lo)) return unsigned(isnan(x) ? bins + 2 : bins);
    if (x > hi) return unsigned(bins + 1);
    double t = __dmul_rn(__dsub_rn(x, lo), norm);
    return settle(x, t < double(bins) ? (long long)t : bins - 1);
  }
  // The bin of in-range x from a candidate c in [0, bins): moved until edge c ≤ x < edge c + 1.
  __device__ unsigned settle(double x, long long c) const {
    while (c > 0 && x < edge(c))
      --c;
    while (c < bins - 1 && x >= edge(c + 1))
      ++c;
    return unsigned(c);
  }
};

inline EvenRuleDevice even_rule_device(const HistogramProblem& p) {
  EvenRule r(p);
  return EvenRuleDevice{r.bins, r.lo, r.hi, r.step, r.norm};
}

struct EdgesRuleDevice {
  const double* edges;
  long long bins;
  template <class T>
  __device__ unsigned slot(T value) const {
    double x = double(value);
    if (!(x >= __ldg(edges))) return unsigned(isnan(x) ? bins + 2 : bins);
    if (x > __ldg(edges + bins)) return unsigned(bins + 1);
    long long below = 0, above = bins;
    while (above - below > 1) {
      long long mid = below + (above - below) / 2;
      if (__ldg(edges + mid) <= x) {
        below = mid;
      } else {
        above = mid;
      }
    }
    return unsigned(below);
  }
};

// The float32 even rule (FloatEvenRule). Its corrections compare x with the float64 edges
// themselves (x < edge ⇔ x < the smallest float ≥ edge, the threshold of the other backends):
// a few float64 operations instead of a dependent load from device memory. The error bound,
// so the share of values near an edge, grows with the bin count, and at 65536 bins most warps
// had a value to correct and stalled on that load.
// 16-bit input (read as its bits, decoded by `bits16`: uint16, int16, float16 or bfloat16) takes
// the same rule: every such value is exactly a float, and the arithmetic costs less than a load
// from the 256 KiB value table, which does not stay in L1 (H100, uint16 at 256 bins: 3024 µs
// through the table). So do 32-bit integers of magnitude up to 2^24 (exactly floats; an integer
// test, no conversion back): a larger one is never taken as exact and goes to the float64 even
// rule whole.
struct FloatRuleDevice {
  FloatEvenRule rule;
  EvenRuleDevice even;
  DType bits16 = DType::uint16;
  __device__ float value(float x) const { return x; }
  __device__ float value(unsigned short bits) const {
    switch (bits16) {
      case DType::int16:
        return float(short(bits));
      case DType::float16:
        return __half2float(__ushort_as_half(bits));
      case DType::bfloat16:
        return __uint_as_float(unsigned(bits) << 16);
      default:
        return float(bits);
    }
  }
  __device__ float value(int x) const { return float(x); }
  __device__ float value(unsigned x) const { return float(x); }
  __device__ static bool exactly_float(int x) { return unsigned(x) + (1u << 24) <= (2u << 24); }
  __device__ static bool exactly_float(unsigned x) { return x <= (1u << 24); }
  template <class T>
  __device__ unsigned quick(T x, bool& exact) const {
    const unsigned s = rule.quick(value(x), exact);
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>) exact &= exactly_float(x);
    return s;
  }
  template <class T>
  __device__ unsigned correct(T x, unsigned candidate) const {
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>) {
      if (!exactly_float(x)) return even.slot(x);
    }
    return even.settle(double(value(x)), min((long long)candidate, even.bins - 1));
  }

  // `fast` counts in rows rather than slots: row 0 below the range, 1 + b for bin b, bins + 1
  // above it, bins + 2 NaN. The row comes from one clamp of t = (x − lo)·norm to
  // [−0.5, bins + 0.5] (NaN kept) and floor(t) + 1 from the low bits of t + 2^23 + 1 rounded
  // toward zero: about half the work of quick(), whose slot order needs the range tested apart.
  // It is exact when t's fraction lies in (delta, 1 − delta):
  //  - inside the range, as quick() (the same t and floor);
  //  - below it: t is negative only if x < lo (both roundings keep the sign), and t ≥ 0 of a
  //    value below the range is 0 (fraction 0: never exact);
  //  - above it: t > bins + delta only if x > hi (t is monotone in x and within delta of bins
  //    at hi), and t of a value above the range exceeds bins − delta (the same relative bound).
  // NaN reaches the fraction and fails both tests; every inexact value goes to corrected_row,
  // inline: out of line, the call's saved registers cost more than the correction (H100, float32
  // at 65536 bins: 1288 against 917 µs; uint16 at 256 bins: 712 against 510 µs).
  template <class T>
  __device__ unsigned quick_row(T raw, bool& exact) const {
    const float t = __fmul_rn(__fsub_rn(value(raw), rule.lo), rule.norm);
    float clamped;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(clamped) : "f"(t), "f"(float(rule.bins) + 0.5f));
    asm("max.NaN.f32 %0, %0, %1;" : "+f"(clamped) : "f"(-0.5f));
    constexpr float kShift = 8388609.0f;  // 2^23 + 1
    const float shifted = __fadd_rz(clamped, kShift);
    const unsigned row = unsigned(__float_as_int(shifted) - 0x4B000000);
    const float frac = __fsub_rn(clamped, __fsub_rn(shifted, kShift));
    // t = bins exactly is hi itself (the last bin) under exact arithmetic (FloatEvenRule).
    exact = (frac > rule.delta) & (frac < 1.0f - rule.delta) & (clamped != float(rule.bins));
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>)
      exact &= exactly_float(raw);
    return row;
  }
  // The row of an inexact value by the float64 even rule, settled from its candidate row.
  template <class T>
  __device__ unsigned corrected_row(T raw, unsigned candidate) const {
    // 32-bit integers exactly (beyond 2^24 their float is rounded), the rest through value().
    double x;
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>) {
      x = double(raw);
    } else {
      x = double(value(raw));
    }
    const long long bins = even.bins;
    if (!(x >= even.lo)) return unsigned(isnan(x) ? bins + 2 : 0);
    if (x > even.hi) return unsigned(bins + 1);
    return even.settle(x, max(0ll, min((long long)candidate - 1, bins - 1))) + 1;
  }
};

// `fast` on 4- and 8-byte integers with power-of-two bin widths over an integer range
// (IntegerShiftRule): each row in integer arithmetic alone (two clamps in the value's type, a
// multiply-add, a shift), always exact — no float conversion, no exactness test, no correction.
struct IntegerRuleDevice {
  IntegerShiftRule rule;
  template <class T>
  __device__ unsigned row(T x) const {
    return rule.row(x);
  }
};

// `fast` on 16-bit input where Even16Rule holds (checked on the host for every value), two values
// of a 32-bit word at a time: each decoded to float in one or two instructions without the
// conversion unit — an integer as the low bits of a float of exponent 23 (one byte permute), less
// 2^23 (int16 biased by 2^15 first, one xor for both), float16 by the half-to-float add, bfloat16
// as the top half of a float — then the rule's multiply-add, clamp and floor. Never a correction.
// kHi: a value of the dtype can equal hi (the rule's closing test).
template <DType kDtype, bool kHi>
struct Even16RuleDevice {
  Even16Rule rule;
  static constexpr bool kFloat = kDtype == DType::float16 || kDtype == DType::bfloat16;
  __device__ unsigned row(float x) const { return rule.row<kFloat, kHi>(x); }
  __device__ unsigned row(unsigned short bits) const {
    float low, high;
    decode(bits, low, high);
    return row(low);
  }
  // The rows of a 16-byte vector's eight values, in memory order.
  __device__ void rows(const uint4& raw, unsigned (&out)[8]) const {
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      float low, high;
      decode(words[w], low, high);
      out[2 * w] = row(low);
      out[2 * w + 1] = row(high);
    }
  }
  // The two values of a word (low half first) as floats.
  __device__ static void decode(unsigned word, float& low, float& high) {
    if constexpr (kDtype == DType::float16) {
      low = float16_bits_to_float((unsigned short)(word & 0xFFFFu));
      high = float16_bits_to_float((unsigned short)(word >> 16));
    } else if constexpr (kDtype == DType::bfloat16) {
      low = __uint_as_float(word << 16);
      high = __uint_as_float(word & 0xFFFF0000u);
    } else {
      constexpr bool kSigned = kDtype == DType::int16;
      const unsigned biased = kSigned ? word ^ 0x80008000u : word;
      constexpr float kBias = kSigned ? 8421376.0f : 8388608.0f;  // 2^23 (+ 2^15)
      low = __fsub_rn(__uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7610)), kBias);
      high = __fsub_rn(__uint_as_float(__byte_perm(biased, 0x4B000000u, 0x7632)), kBias);
    }
  }
};

template <class Rule>
constexpr bool kEven16 = false;
template <DType kDtype, bool kHi>
constexpr bool kEven16<Even16RuleDevice<kDtype, kHi>> = true;

// `fast` on float64 with even bins (Float64EvenRule), and on 4- and 8-byte integers that no
// cheaper rule takes (converted to float64 first): the float rule's rows in float64
// arithmetic, no conversion instruction on the way; a value next to an edge (and hi, NaN) is
// settled against the float64 edges, as the even rule places every value.
struct DoubleRuleDevice {
  Float64EvenRule rule;
  EvenRuleDevice even;
  __device__ unsigned quick_row(double x, bool& exact) const { return rule.row(x, exact); }
  __device__ unsigned corrected_row(double x, unsigned candidate) const {
    const long long bins = even.bins;
    if (!(x >= even.lo)) return unsigned(isnan(x) ? bins + 2 : 0);
    if (x > even.hi) return unsigned(bins + 1);
    return even.settle(x, max(0ll, min((long long)candidate - 1, bins - 1))) + 1;
  }
};

// 1- and 2-byte input counted per value: the row of a value is its bits; the flush (and a packed
// row's carry) maps each value's count to its slot through the value → slot table.
struct PerValueRule {
  const unsigned* table;
  bool shared_slots = true;  // some slot takes several values: the flush sums their runs
  template <class T>
  __device__ unsigned slot(T x) const {
    return unsigned(x);
  }
};

template <class Rule>
constexpr bool kCountsPerValue = std::is_same_v<Rule, PerValueRule>;

// Calls f with the slot rule of kernel element type T (1- and 2-byte input as its bits) for `p`:
// the float rule where `float_rule` is usable (built by the caller for the dtypes it places in
// float arithmetic), else the bits → slot table of 1- and 2-byte input (`aux`), the even rule, or
// a binary search over the explicit edges (`aux`).
template <class T, class F>
void with_slot_rule(const HistogramProblem& p, const FloatEvenRule& float_rule, const void* aux,
                    F f) {
  if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
    if (float_rule.usable) {
      f(FloatRuleDevice{float_rule, even_rule_device(p), p.dtype});
      return;
    }
  }
  if constexpr (sizeof(T) <= 2) {
    f(TableRule{static_cast<const unsigned*>(aux)});
  } else if (p.even) {
    f(even_rule_device(p));
  } else {
    f(EdgesRuleDevice{static_cast<const double*>(aux), p.bins});
  }
}

// The fast kernels ask every rule for a quick place and, where that is not exact, a correction
// (only the float rules ever need one). The place is a slot, or with kRows the row `fast` counts
// (the float, float64 and integer rules' own order, FloatRuleDevice::quick_row; every other
// rule's rows are slots).
template <bool kRows, class Rule, class T>
__device__ unsigned quick_place(const Rule& rule, T x, bool& exact) {
  if constexpr (std::is_same_v<Rule, IntegerRuleDevice> || kEven16<Rule>) {
    static_assert(kRows, "the integer and 16-bit rules count in rows (fast only)");
    exact = true;
    return rule.row(x);
  } else if constexpr (std::is_same_v<Rule, FloatRuleDevice>) {
    if constexpr (kRows) {
      return rule.quick_row(x, exact);
    } else {
      return rule.quick(x, exact);
    }
  } else if constexpr (std::is_same_v<Rule, DoubleRuleDevice>) {
    static_assert(kRows, "the float64 rule counts in rows (fast only)");
    return rule.quick_row(double(x), exact);  // integers as numpy compares them: in float64
  } else {
    exact = true;
    return rule.slot(x);
  }
}

template <bool kRows, class Rule, class T>
__device__ unsigned corrected_place(const Rule& rule, T x, unsigned candidate) {
  if constexpr (std::is_same_v<Rule, FloatRuleDevice>) {
    if constexpr (kRows) {
      return rule.corrected_row(x, candidate);
    } else {
      return rule.correct(x, candidate);
    }
  } else if constexpr (std::is_same_v<Rule, DoubleRuleDevice>) {
    return rule.corrected_row(double(x), candidate);
  } else {
    return candidate;
  }
}

// The slot of each row `fast` counts: the float and integer rules' rows are shifted (row 0 below
// the range, and the 16-bit rule's hi row: slot_of_row), a value counted per value goes through
// the value → slot table, every other rule's rows are their slots.
struct RowSlots {
  unsigned bins = 0;
  bool shifted = false;
  const unsigned* table = nullptr;  // counting per value: each value's slot
  bool hi_row = false;              // Even16Rule::hi_row
  __device__ unsigned of(unsigned r) const {
    if (table) return table[r];
    return shifted ? slot_of_row(r, bins, hi_row) : r;
  }
};

template <class Rule>
RowSlots __host__ __device__ row_slots(const Rule& rule) {
  if constexpr (kEven16<Rule>) {
    return RowSlots{unsigned(rule.rule.bins), true, nullptr, rule.rule.hi_row};
  } else if constexpr (std::is_same_v<Rule, IntegerRuleDevice>) {
    return RowSlots{unsigned(rule.rule.bins), true};
  } else if constexpr (std::is_same_v<Rule, FloatRuleDevice> ||
                       std::is_same_v<Rule, DoubleRuleDevice>) {
    return RowSlots{unsigned(rule.even.bins), true};
  } else if constexpr (std::is_same_v<Rule, PerValueRule>) {
    return RowSlots{0, false, rule.table};
  } else {
    return RowSlots{};
  }
}
}  // namespace
}  // namespace parpat::detail
