// CPU histogram variants. `serial` is the reference itself. `parallel` gives each thread one
// contiguous section of the input and its own private histogram of 32-bit counters (four or two
// of them, used in turn, when the slots are few: no sharing, no atomics, no chain of increments
// on one counter; a section holds under 2^31 values, so they cannot wrap), then adds the private
// histograms into the 64-bit counts bin range by bin range in parallel. 1-byte input (bool,
// int8, uint8) is counted per byte value and mapped to bins at the merge; 2-byte integers (int16,
// uint16) find their slot through a bits → slot table,
// float32 with even bins through FloatEvenRule in vector lanes (float arithmetic, exact; a block
// of one repeated value is added at once), 4- and 8-byte integers over power-of-two bin widths
// through IntegerShiftRule (integer arithmetic alone, exact), other input through the
// candidate-and-correct even rule or a binary search over explicit edges. Past a memory budget for
// the private copies (very many bins), the threads count into one shared histogram with relaxed
// atomic adds instead. A view of one step is read in place, a block of values at a time.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "histogram/tuning.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/cpu/simd.hpp"

namespace parpat::detail {

namespace {

class SerialKernel final : public HistogramKernel {
 public:
  explicit SerialKernel(const HistogramProblem& p)
      : p_(p), chunk_(static_cast<std::size_t>(p.slots())) {}
  void run(const Buffer& in, std::int64_t /*step: 1*/, const Buffer& counts,
           bool accumulate) override {
    auto* out = static_cast<std::uint64_t*>(counts.handle());
    if (!accumulate) {
      histogram_reference(in.handle(), p_, out);
      return;
    }
    histogram_reference(in.handle(), p_, chunk_.data());
    for (std::size_t s = 0; s < chunk_.size(); ++s)
      out[s] += chunk_[s];
  }

 private:
  HistogramProblem p_;
  std::vector<std::uint64_t> chunk_;  // one call's counts, to add to the caller's
};

// Slot of x by binary search over explicit edges (upper_bound − 1, clamped to the last bin).
struct EdgesRule {
  const std::vector<double>* edges;
  std::int64_t bins;
  std::int64_t slot(double x) const {
    if (!(x >= edges->front())) return std::isnan(x) ? bins + 2 : bins;
    if (x > edges->back()) return bins + 1;
    auto it = std::upper_bound(edges->begin(), edges->end(), x);
    return std::min<std::int64_t>(it - edges->begin() - 1, bins - 1);
  }
};

// FloatEvenRule::quick for a block of kFloatBlock values in float lanes: slots[j] is the slot of
// x[j], with bit 31 set where the candidate still needs corrected(). Returns kSomeInexact when
// any does, and kAllEqual when every value of the block equals the first (all-equal data then
// adds the block to one counter at once).
constexpr int kFloatBlock = 256;
constexpr std::uint32_t kInexact = 1u << 31;
constexpr int kSomeInexact = 1, kAllEqual = 2;

template <int kBytes>
PARPAT_CPU_INLINE int float_slots(const FloatEvenRule& rule, const float* x, std::uint32_t* slots) {
  using F = simd::Vec<float, kBytes>;
  using I = simd::Vec<std::int32_t, kBytes>;
  using U = simd::Vec<std::uint32_t, kBytes>;
  F lo, norm, lo_up, hi_down, delta, one_minus_delta, first;
  U bins;
  simd::splat(lo, rule.lo);
  simd::splat(norm, rule.norm);
  simd::splat(lo_up, rule.lo_up);
  simd::splat(hi_down, rule.hi_down);
  simd::splat(delta, rule.delta);
  simd::splat(one_minus_delta, 1.0f - rule.delta);
  simd::splat(first, x[0]);
  simd::splat(bins, static_cast<std::uint32_t>(rule.bins));
  const F zero = {};
  I inexact = {}, differs = {};
  for (int j = 0; j < kFloatBlock; j += kBytes / 4) {
    F v;
    simd::load(v, x + j);
    differs |= v != first;
    F t = (v - lo) * norm;
    I inside = (v >= lo_up) & (v <= hi_down);
    t = inside ? (t > zero ? t : zero) : zero;
    I c = __builtin_convertvector(t, I);
    F frac = t - __builtin_convertvector(c, F);
    U candidate = (U)c;
    I exact = ~inside | ((candidate < bins) & (frac > delta) & (frac < one_minus_delta));
    U outside = v < lo_up ? bins : (v > hi_down ? bins + 1u : bins + 2u);
    U slot = inside ? candidate : outside;
    inexact |= ~exact;
    slot |= ~(U)exact & kInexact;
    std::memcpy(slots + j, &slot, sizeof slot);
  }
  return (simd::any(inexact) ? kSomeInexact : 0) | (simd::any(differs) ? 0 : kAllEqual);
}

PARPAT_CPU_AVX2 int float_slots_avx2(const FloatEvenRule& rule, const float* x,
                                     std::uint32_t* slots) {
  return float_slots<simd::kAvx2Bytes>(rule, x, slots);
}

int float_slots_baseline(const FloatEvenRule& rule, const float* x, std::uint32_t* slots) {
  return float_slots<simd::kBaselineBytes>(rule, x, slots);
}

// IntegerShiftRule for a block of kFloatBlock integers: slots[j] is the slot of x[j] (a plain
// loop of clamps and shifts, which the compiler puts in vector lanes). Returns whether every
// value of the block equals the first (all-equal data then adds the block at once).
template <class T>
PARPAT_CPU_INLINE bool shift_slots(const IntegerShiftRule& rule, const T* x, std::uint32_t* slots) {
  const auto bins = static_cast<std::uint32_t>(rule.bins);
  T differs = 0;  // the bits in which some value differs from the first
  for (int j = 0; j < kFloatBlock; ++j) {
    slots[j] = slot_of_row(rule.row(x[j]), bins);
    differs |= x[j] ^ x[0];
  }
  return differs == 0;
}

template <class T>
PARPAT_CPU_AVX2 bool shift_slots_avx2(const IntegerShiftRule& rule, const T* x,
                                      std::uint32_t* slots) {
  return shift_slots(rule, x, slots);
}

template <class T>
bool shift_slots_baseline(const IntegerShiftRule& rule, const T* x, std::uint32_t* slots) {
  return shift_slots(rule, x, slots);
}

using Counter = std::uint32_t;  // a private counter (sections hold under 2^31 values)

template <class T>
class ParallelKernel final : public HistogramKernel {
 public:
  ParallelKernel(const Device& d, const HistogramProblem& p)
      : cpu_(backend_cast<CpuDevice>(d)), p_(p), even_(p) {
    if constexpr (sizeof(T) <= 2) table_ = slot_table(p);
    if constexpr (std::is_same_v<T, float>) {
      float_rule_ = FloatEvenRule(p);
      if (float_rule_.usable) thresholds_ = float_thresholds(p);
    }
    if constexpr (kWideInteger) int_shift_ = IntegerShiftRule(p);
    // 1-byte input is counted per value (256 counters whatever the bins) and mapped at the merge.
    counted_ = sizeof(T) == 1 ? 256 : p.slots();
    // Private counters are 32-bit (half the cache of 64-bit ones), so a section holds at most
    // histogram.parallel.section_values values: very large inputs take more sections than
    // threads.
    sections_ = std::max<std::int64_t>(1, std::min<std::int64_t>(cpu_.threads(), p.n / 4096 + 1));
    const HistogramParallelPolicy policy = tuned<HistogramParallelPolicy>(d.info());
    const std::int64_t section_values = policy.section_values;
    sections_ = std::max(sections_, (p.n + section_values - 1) / section_values);
    auto budget = static_cast<std::int64_t>(policy.private_mib) << 20;
    // Few slots: copies per thread used in turn (four up to 300 slots, two up to 4096, so
    // they stay in L1), so consecutive equal values do not wait on each other's increments.
    ways_ = counted_ <= 300 ? 4 : (counted_ <= 4096 ? 2 : 1);
    shared_ = sizeof(T) != 1 && sections_ > 1 &&
              sections_ * ways_ * counted_ * std::int64_t{sizeof(Counter)} > budget;
    private_.resize(static_cast<std::size_t>(shared_ ? 0 : sections_ * ways_ * counted_));
  }

  bool reads_steps() const override { return true; }

  void run(const Buffer& in, std::int64_t step, const Buffer& counts, bool accumulate) override {
    const T* x = static_cast<const T*>(in.handle());
    auto* out = static_cast<std::uint64_t*>(counts.handle());
    const std::int64_t slots = counted_;
    if (shared_ && !accumulate) std::fill(out, out + slots, std::uint64_t{0});
    cpu_.parallel_for(sections_, [&](std::int64_t s) {
      std::int64_t begin = p_.n * s / sections_, end = p_.n * (s + 1) / sections_;
      if (shared_) {
        count_section(x, step, begin, end, [out](std::int64_t slot, int, std::uint64_t amount = 1) {
          __atomic_fetch_add(out + slot, amount, __ATOMIC_RELAXED);
        });
      } else {
        Counter* mine = private_.data() + s * ways_ * slots;
        std::fill(mine, mine + ways_ * slots, Counter{0});
        Counter* copy[4];
        for (int k = 0; k < 4; ++k)
          copy[k] = mine + (k & (ways_ - 1)) * slots;
        count_section(x, step, begin, end,
                      [&copy](std::int64_t slot, int k, std::uint64_t amount = 1) {
                        copy[k][slot] += static_cast<Counter>(amount);
                      });
      }
    });
    if (shared_) return;
    if constexpr (sizeof(T) == 1) {
      if (!accumulate) std::fill(out, out + p_.slots(), std::uint64_t{0});
      for (std::int64_t v = 0; v < 256; ++v) {
        std::uint64_t sum = 0;
        for (std::int64_t copy = 0; copy < sections_ * ways_; ++copy)
          sum += private_[static_cast<std::size_t>(copy * 256 + v)];
        out[table_[static_cast<std::size_t>(v)]] += sum;
      }
      return;
    }
    constexpr std::int64_t kMergeChunk = 1 << 14;
    cpu_.parallel_for((slots + kMergeChunk - 1) / kMergeChunk, [&](std::int64_t c) {
      std::int64_t b = c * kMergeChunk, e = std::min(slots, b + kMergeChunk);
      for (std::int64_t i = b; i < e; ++i) {
        std::uint64_t sum = 0;
        for (std::int64_t copy = 0; copy < sections_ * ways_; ++copy)
          sum += private_[static_cast<std::size_t>(copy * slots + i)];
        out[i] = accumulate ? out[i] + sum : sum;
      }
    });
  }

 private:
  // count() of the values [begin, end) of a view whose values lie `step` apart: dense values in
  // place, else gathered a block at a time into the thread's stack (in cache, not a copy of the
  // whole view).
  template <class Add>
  void count_section(const T* x, std::int64_t step, std::int64_t begin, std::int64_t end,
                     Add add) const {
    if (step == 1) {
      count(x, begin, end, add);
      return;
    }
    constexpr std::int64_t kStepBlock = 4096;
    T block[kStepBlock];
    for (std::int64_t b = begin; b < end; b += kStepBlock) {
      const std::int64_t values = std::min(kStepBlock, end - b);
      for (std::int64_t j = 0; j < values; ++j)
        block[j] = x[(b + j) * step];
      count(block, 0, values, add);
    }
  }

  // Calls add(slot, copy) for every value of [begin, end), or add(slot, copy, amount) once for
  // `amount` equal values; `copy` in 0..3 says which private copy may take them. Values go four
  // at a time, so `copy` is a constant in each call.
  template <class Add>
  void count(const T* x, std::int64_t begin, std::int64_t end, Add add) const {
    if constexpr (std::is_same_v<T, float>) {
      if (float_rule_.usable) {
        count_floats(x, begin, end, add);
        return;
      }
    }
    if constexpr (kWideInteger) {
      if (int_shift_.usable) {
        count_shifted(x, begin, end, add);
        return;
      }
    }
    if constexpr (sizeof(T) == 1) {
      in_fours(
          begin, end, [x](std::int64_t i) { return x[i]; }, add);
    } else if constexpr (sizeof(T) == 2) {
      const std::uint32_t* table = table_.data();
      in_fours(
          begin, end, [x, table](std::int64_t i) { return table[x[i]]; }, add);
    } else if (p_.even) {
      in_fours(
          begin, end, [&](std::int64_t i) { return even_.slot(static_cast<double>(x[i])); }, add);
    } else {
      EdgesRule rule{&p_.edges, p_.bins};
      in_fours(
          begin, end, [&](std::int64_t i) { return rule.slot(static_cast<double>(x[i])); }, add);
    }
  }

  template <class SlotOf, class Add>
  static PARPAT_CPU_INLINE void in_fours(std::int64_t begin, std::int64_t end, SlotOf slot_of,
                                         Add add) {
    std::int64_t i = begin;
    for (; i + 4 <= end; i += 4) {
      add(slot_of(i), 0);
      add(slot_of(i + 1), 1);
      add(slot_of(i + 2), 2);
      add(slot_of(i + 3), 3);
    }
    for (; i < end; ++i)
      add(slot_of(i), 0);
  }

  // 4- and 8-byte integers over power-of-two widths: the slots of a block in lanes, then the
  // counting (a block of one repeated value at once).
  template <class Add>
  void count_shifted(const T* x, std::int64_t begin, std::int64_t end, Add add) const {
    const bool avx2 = simd::cpu_has_avx2();
    std::uint32_t slots[kFloatBlock];
    std::int64_t i = begin;
    for (; i + kFloatBlock <= end; i += kFloatBlock) {
      const bool all_equal = avx2 ? shift_slots_avx2(int_shift_, x + i, slots)
                                  : shift_slots_baseline(int_shift_, x + i, slots);
      if (all_equal) {
        add(slots[0], 0, kFloatBlock);
        continue;
      }
      in_fours(
          0, kFloatBlock, [&slots](std::int64_t j) { return slots[j]; }, add);
    }
    const auto bins = static_cast<std::uint32_t>(p_.bins);
    in_fours(
        i, end, [&](std::int64_t k) { return slot_of_row(int_shift_.row(x[k]), bins); }, add);
  }

  // float32 with even bins: the slots of a block in lanes, the rare inexact ones settled, then
  // the counting. The last value that needed correcting is remembered: values on an edge
  // (all-equal data often sit on one) pay for one correction, not one each.
  template <class Add>
  void count_floats(const float* x, std::int64_t begin, std::int64_t end, Add add) const {
    float memo_value = std::numeric_limits<float>::quiet_NaN();
    std::uint32_t memo_slot = 0;
    auto settle = [&](std::uint32_t slot, float v) {
      if (slot & kInexact) {
        if (!(v == memo_value)) {
          memo_slot =
              float_rule_.corrected(v, static_cast<int>(slot & ~kInexact), thresholds_.data());
          memo_value = v;
        }
        slot = memo_slot;
      }
      return slot;
    };
    const bool avx2 = simd::cpu_has_avx2();
    std::uint32_t slots[kFloatBlock];
    std::int64_t i = begin;
    for (; i + kFloatBlock <= end; i += kFloatBlock) {
      int found = avx2 ? float_slots_avx2(float_rule_, x + i, slots)
                       : float_slots_baseline(float_rule_, x + i, slots);
      if (found & kAllEqual) {
        add(settle(slots[0], x[i]), 0, kFloatBlock);
        continue;
      }
      if (found & kSomeInexact)
        for (int j = 0; j < kFloatBlock; ++j)
          slots[j] = settle(slots[j], x[i + j]);
      in_fours(
          0, kFloatBlock, [&slots](std::int64_t j) { return slots[j]; }, add);
    }
    in_fours(
        i, end,
        [&](std::int64_t k) {
          bool exact = true;
          std::uint32_t slot = float_rule_.quick(x[k], exact);
          return settle(exact ? slot : slot | kInexact, x[k]);
        },
        add);
  }

  static constexpr bool kWideInteger = std::is_integral_v<T> && sizeof(T) >= 4;

  CpuDevice& cpu_;
  HistogramProblem p_;
  EvenRule even_;
  FloatEvenRule float_rule_;       // usable only for float32 with even bins
  IntegerShiftRule int_shift_;     // 4- and 8-byte integers over power-of-two bin widths
  std::vector<float> thresholds_;  // float32: the smallest float at or above each edge
  std::vector<std::uint32_t> table_;
  std::int64_t counted_ = 0;  // counters per private histogram: 256 values or the slots
  std::int64_t sections_ = 1;
  std::int64_t ways_ = 1;  // private copies per thread (a power of two)
  bool shared_ = false;
  std::vector<Counter> private_;
};

bool supports_everything(const HistogramProblem&, const DeviceInfo&) {
  return true;
}

std::unique_ptr<HistogramKernel> make_serial(const Device&, const HistogramProblem& p) {
  return std::make_unique<SerialKernel>(p);
}

std::unique_ptr<HistogramKernel> make_parallel(const Device& d, const HistogramProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<HistogramKernel> {
    return std::make_unique<ParallelKernel<kernel_element_t<decltype(t)>>>(d, p);
  });
}

}  // namespace

std::vector<HistogramVariant> cpu_histogram_variants() {
  auto info = [](const char* name, const char* idea, const char* params) {
    return variant_info("histogram", Backend::cpu, name, idea, params);
  };
  return {
      {info("serial", "the reference: binary search over the float64 edges, one value at a time",
            "threads=1"),
       supports_everything, make_serial, make_cpu_weighted_serial},
      {info("parallel",
            "a contiguous section and a private histogram per thread, merged by bin ranges; "
            "1-byte input counted per value, value table for 2-byte integers, float32 slots in "
            "vector lanes, shifts for 4- and 8-byte integers over power-of-two widths; views of "
            "one step (x[::s]) read in place, 4096 values at a time",
            "threads=all private<=256MiB"),
       supports_everything, make_parallel, make_cpu_weighted_parallel},
  };
}

}  // namespace parpat::detail
