// CPU histogram variants. `serial` is the reference itself. `parallel` gives each thread one
// contiguous section of the input and its own private histogram (four of them, used in turn,
// when the slots are few: no sharing, no atomics, no chain of increments on one counter), then
// adds the private histograms bin range by bin range in parallel. uint8 is counted per value
// and mapped to bins at the merge; uint16 finds its slot through a value → slot table, float32
// with even bins through FloatEvenRule (float arithmetic, exact), other input through the
// candidate-and-correct even rule or a binary search over explicit edges. Past a memory budget for
// the private copies (very many bins), the threads count into one shared histogram with relaxed
// atomic adds instead.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/cpu/simd.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

class SerialKernel final : public HistogramKernel {
 public:
  explicit SerialKernel(const HistogramProblem& p) : p_(p) {}
  void run(const Buffer& in, const Buffer& counts) override {
    histogram_reference(in.handle(), p_, static_cast<std::uint64_t*>(counts.handle()));
  }

 private:
  HistogramProblem p_;
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

// FloatEvenRule::quick for a block of kFloatBlock values in eight-float lanes: slots[j] is the
// slot of x[j], with bit 31 set where the candidate still needs corrected().
constexpr int kFloatBlock = 256;
constexpr std::uint32_t kInexact = 1u << 31;

PARPAT_CPU_INLINE void float_slots(const FloatEvenRule& rule, const float* x,
                                   std::uint32_t* slots) {
  using namespace simd;
  const F8 lo = F8{} + rule.lo, norm = F8{} + rule.norm, lo_up = F8{} + rule.lo_up,
           hi_down = F8{} + rule.hi_down, delta = F8{} + rule.delta,
           one_minus_delta = F8{} + (1.0f - rule.delta), zero = {};
  const U8 bins = U8{} + static_cast<std::uint32_t>(rule.bins);
  for (int j = 0; j < kFloatBlock; j += 8) {
    F8 v;
    load(v, x + j);
    F8 t = (v - lo) * norm;
    I8 inside = (v >= lo_up) & (v <= hi_down);
    t = inside ? (t > zero ? t : zero) : zero;
    I8 c = __builtin_convertvector(t, I8);
    F8 frac = t - __builtin_convertvector(c, F8);
    I8 exact =
        ~inside | ((reinterpret_cast<U8&>(c) < bins) & (frac > delta) & (frac < one_minus_delta));
    U8 outside = v < lo_up ? bins : (v > hi_down ? bins + 1u : bins + 2u);
    U8 slot = inside ? reinterpret_cast<U8&>(c) : outside;
    slot |= (~reinterpret_cast<U8&>(exact)) & kInexact;
    std::memcpy(slots + j, &slot, sizeof slot);
  }
}

PARPAT_CPU_AVX2 void float_slots_avx2(const FloatEvenRule& rule, const float* x,
                                      std::uint32_t* slots) {
  float_slots(rule, x, slots);
}

void float_slots_baseline(const FloatEvenRule& rule, const float* x, std::uint32_t* slots) {
  float_slots(rule, x, slots);
}

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
    // uint8 is counted per value (256 counters whatever the bins) and mapped at the merge.
    counted_ = sizeof(T) == 1 ? 256 : p.slots();
    sections_ = std::max<std::int64_t>(1, std::min<std::int64_t>(cpu_.threads(), p.n / 4096 + 1));
    auto budget = static_cast<std::int64_t>(tuning(d.info(), "histogram.parallel.private_mib", 256))
                  << 20;
    // Few slots: copies per thread used in turn (four up to 300 slots, two up to 4096, so
    // they stay in L1), so consecutive equal values do not wait on each other's increments.
    ways_ = counted_ <= 300 ? 4 : (counted_ <= 4096 ? 2 : 1);
    shared_ = sizeof(T) != 1 && sections_ > 1 && sections_ * ways_ * counted_ * 8 > budget;
    private_.resize(static_cast<std::size_t>(shared_ ? 0 : sections_ * ways_ * counted_));
  }

  void run(const Buffer& in, const Buffer& counts) override {
    const T* x = static_cast<const T*>(in.handle());
    auto* out = static_cast<std::uint64_t*>(counts.handle());
    const std::int64_t slots = counted_;
    if (shared_) std::fill(out, out + slots, std::uint64_t{0});
    cpu_.parallel_for(sections_, [&](std::int64_t s) {
      std::int64_t begin = p_.n * s / sections_, end = p_.n * (s + 1) / sections_;
      if (shared_) {
        count(x, begin, end, [out](std::int64_t slot, std::int64_t) {
          __atomic_fetch_add(out + slot, std::uint64_t{1}, __ATOMIC_RELAXED);
        });
      } else {
        std::uint64_t* mine = private_.data() + s * ways_ * slots;
        std::fill(mine, mine + ways_ * slots, std::uint64_t{0});
        const std::int64_t way_mask = ways_ - 1;
        count(x, begin, end, [mine, slots, way_mask](std::int64_t slot, std::int64_t i) {
          ++mine[(i & way_mask) * slots + slot];
        });
      }
    });
    if (shared_) return;
    if constexpr (sizeof(T) == 1) {
      std::fill(out, out + p_.slots(), std::uint64_t{0});
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
        out[i] = sum;
      }
    });
  }

 private:
  template <class Add>
  void count(const T* x, std::int64_t begin, std::int64_t end, Add add) const {
    if constexpr (sizeof(T) == 1) {
      for (std::int64_t i = begin; i < end; ++i)
        add(x[i], i);
    } else if constexpr (sizeof(T) == 2) {
      const std::uint32_t* table = table_.data();
      for (std::int64_t i = begin; i < end; ++i)
        add(table[x[i]], i);
    } else if (float_rule_.usable) {
      if constexpr (std::is_same_v<T, float>) {
        // Slots a block at a time in lanes, then the counting. The last value that needed
        // correcting is remembered: values on an edge (all-equal data often sit on one) pay for
        // one correction, not one each.
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
          if (avx2) {
            float_slots_avx2(float_rule_, x + i, slots);
          } else {
            float_slots_baseline(float_rule_, x + i, slots);
          }
          for (int j = 0; j < kFloatBlock; ++j)
            add(settle(slots[j], x[i + j]), i + j);
        }
        for (; i < end; ++i) {
          bool exact = true;
          std::uint32_t slot = float_rule_.quick(x[i], exact);
          add(settle(exact ? slot : slot | kInexact, x[i]), i);
        }
      }
    } else if (p_.even) {
      for (std::int64_t i = begin; i < end; ++i)
        add(even_.slot(static_cast<double>(x[i])), i);
    } else {
      EdgesRule rule{&p_.edges, p_.bins};
      for (std::int64_t i = begin; i < end; ++i)
        add(rule.slot(static_cast<double>(x[i])), i);
    }
  }

  CpuDevice& cpu_;
  HistogramProblem p_;
  EvenRule even_;
  FloatEvenRule float_rule_;       // usable only for float32 with even bins
  std::vector<float> thresholds_;  // float32: the smallest float at or above each edge
  std::vector<std::uint32_t> table_;
  std::int64_t counted_ = 0;  // counters per private histogram: 256 values or the slots
  std::int64_t sections_ = 1;
  std::int64_t ways_ = 1;  // private copies per thread (a power of two)
  bool shared_ = false;
  std::vector<std::uint64_t> private_;
};

bool supports_everything(const HistogramProblem&, const DeviceInfo&) {
  return true;
}

std::unique_ptr<HistogramKernel> make_serial(const Device&, const HistogramProblem& p) {
  return std::make_unique<SerialKernel>(p);
}

std::unique_ptr<HistogramKernel> make_parallel(const Device& d, const HistogramProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<HistogramKernel> {
    return std::make_unique<ParallelKernel<decltype(t)>>(d, p);
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
       supports_everything, make_serial},
      {info("parallel",
            "a contiguous section and a private histogram per thread, merged by bin ranges; "
            "uint8 counted per value, value table for uint16, float arithmetic for float32",
            "threads=all private<=256MiB"),
       supports_everything, make_parallel},
  };
}

}  // namespace parpat::detail
