// CUDA histogram variants. Every variant maps a value to a slot (bins, then underflow, overflow
// and NaN) with one of three rules: a bits → slot table for bool and the 1- and 2-byte integers
// (read as uint8/uint16; the table is filled on the host by the reference, so exact), the even
// rule (a float64 candidate (x − lo)·N/(hi − lo) corrected against the exact edges i·step + lo,
// computed with __dmul_rn/__dadd_rn so no FMA changes an edge; 64-bit integers are rounded to
// the nearest float64 first), or a binary search over explicit edges. Counts are 64-bit in global
// memory.
//  - global-atomic: each thread a contiguous section, one global 64-bit atomic per value;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized: a 32-bit histogram per block in shared memory, added to the global counts at
//    the end (blocks are sized so no block sees 2^31 values: 32-bit counts cannot wrap);
//  - aggregated: privatized, and each thread counts a run of equal slots before one atomic;
//  - fast: 16-byte loads, four in flight per thread. 1-byte input is counted per value (256
//    counters whatever the bin count; the flush maps values to bins through the table, summing the
//    runs of values that share a slot), and so are int16 and uint16 from
//    histogram.fast.per_value16_min_bins bins and float16 and bfloat16 from
//    histogram.fast.per_value_float16_min_bins bins (65536 packed counters). 16-bit input with even
//    bins takes Even16Rule where its host check holds (one float multiply-add per value, no test of
//    exactness: the check covers every value; hi in a row of its own where it can be), and 4- and
//    8-byte integers with power-of-two bin widths over an integer range IntegerShiftRule (integer
//    arithmetic alone, exact by construction). Otherwise float32, float16, bfloat16 (their bits
//    decoded) and 16- and 32-bit integers (32-bit ones up to histogram.fast.int_float_max_bins
//    bins: those up to 2^24 in magnitude exactly floats; others by the float64 rule) with even bins
//    take FloatEvenRule (float arithmetic, exact through a proven error bound; the rare value near
//    an edge is settled against the float64 edges; no value at all where the arithmetic cannot
//    round: uint32 with power-of-two widths, float16 from 0, and float32 and bfloat16 from 0 since
//    CUDA keeps subnormals). float64 with even bins takes Float64EvenRule (the same rows in float64
//    arithmetic, settled against the edges only next to one), and so do 4- and 8-byte integers that
//    no rule above takes, each converted to float64 first as numpy converts it (up to
//    histogram.fast.int_float_max_bins bins). The shared histogram is lane-striped: slot s of lane
//    l at π(s)·C + l mod C, with C up to 32 columns, so the lanes of a warp hit distinct banks and
//    distinct words however the data is spread (for bfloat16 in fewer than 8 columns π permutes the
//    rows within each turn of the banks, and in 8 a spare row after each run of rows as far apart
//    as its crowded ones skews them, so that the rows a power of two apart that its data crowds do
//    not share a bank: StripedRows, elsewhere the identity); with fewer columns a per-vector vote
//    sends skewed data through per-thread runs (one atomic per run of equal slots). 32-bit shared
//    counts are added to the 64-bit global ones at the end. When the slots do not fit in shared
//    memory the kernel makes passes over slot ranges (each pass reads the input again and counts
//    only its range); past `histogram.fast.max_passes` passes 4- and 8-byte input is sorted into
//    buckets of rows, each counted in shared memory (kernels_bucketed.cuh; temporary memory of 2
//    bytes a value, in chunks), and other input counts straight into global memory, with the same
//    runs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "histogram/cuda/launch_plan.cuh"
#include "histogram/histogram_internal.hpp"
#include "parpat/cuda/histogram.cuh"
#include "parpat/error.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda/cuda_device.hpp"

namespace parpat::detail {

namespace {

// The rules only `fast` uses (the classic variants keep the table and float64 rules).
template <class Rule>
constexpr bool kFastOnly =
    std::is_same_v<Rule, PerValueRule> || std::is_same_v<Rule, FloatRuleDevice> ||
    std::is_same_v<Rule, IntegerRuleDevice> || std::is_same_v<Rule, DoubleRuleDevice> ||
    kEven16<Rule>;

// Whether two values of a value → slot table share a slot.
bool values_share_a_slot(const std::vector<std::uint32_t>& table, std::int64_t slots) {
  std::vector<bool> taken(static_cast<std::size_t>(slots));
  for (std::uint32_t s : table) {
    if (taken[s]) return true;
    taken[s] = true;
  }
  return false;
}

template <class T>
class CudaHistogram final : public HistogramKernel {
 public:
  CudaHistogram(const Device& d, const HistogramProblem& p, Strategy strategy)
      : device_(d), cuda_(backend_cast<CudaDevice>(d)), p_(p), strategy_(strategy) {
    cuda_.activate();
    // `fast` places float32 values, every 16-bit type (decoded by its dtype, not read as an
    // integer) and 32-bit integers (up to histogram.fast.int_float_max_bins bins) with the float
    // rule where its bound holds.
    const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(d.info());
    const bool float_rule = sizeof(T) == 2 || std::is_same_v<T, float> ||
                            (sizeof(T) == 4 && p.bins <= policy.int_float_max_bins);
    const bool integer16 = p.dtype == DType::int16 || p.dtype == DType::uint16;
    const bool float16 = p.dtype == DType::float16 || p.dtype == DType::bfloat16;
    per_value_ = strategy == Strategy::fast &&
                 (sizeof(T) == 1 || (integer16 && p.bins >= policy.per_value16_min_bins) ||
                  (float16 && p.bins >= policy.per_value_float16_min_bins));
    if (strategy == Strategy::fast && !per_value_) {
      // The 16-bit rule counts its rows (up to bins + 4) in one pass of 32-bit shared counters.
      if (std::size_t(p.bins + 4) * sizeof(unsigned) <= fast_shared_budget(d.info(), policy))
        even16_rule_ = Even16Rule(p);
      integer_rule_ = IntegerShiftRule(p);
    }
    const bool exact_rule = even16_rule_.usable || integer_rule_.usable;
    if (float_rule && strategy == Strategy::fast && !per_value_ && !exact_rule)
      float_rule_ = FloatEvenRule(p, kIeeeSubnormals);
    // float64, and 4- and 8-byte integers that no rule above takes, by the float64 rule: an
    // integer converted to float64 first, as numpy compares it with the edges (up to
    // int_float_max_bins bins: beyond, integer data sits on an edge so often that the rule's
    // corrections cost more than the even rule; H200, int64 at 65536 bins 686 against 457 µs).
    const bool integer_by_double = std::is_integral_v<T> && sizeof(T) >= 4 && !float_rule_.usable &&
                                   !exact_rule && p.bins <= policy.int_float_max_bins;
    if (strategy == Strategy::fast && (std::is_same_v<T, double> || integer_by_double))
      double_rule_ = Float64EvenRule(p);
    if (sizeof(T) <= 2 && !float_rule_.usable && !exact_rule) {
      const auto table = slot_table(p);
      shared_slots_ = values_share_a_slot(table, p.slots());
      aux_ = Buffer(d, table.size() * sizeof(unsigned));
      aux_.upload(table.data(), aux_.bytes());
    } else if (sizeof(T) > 2 && !p.even) {
      aux_ = Buffer(d, p.edges.size() * sizeof(double));
      aux_.upload(p.edges.data(), aux_.bytes());
    }
    block_ = tuned<HistogramClassicPolicy>(d.info()).block;
    if (strategy == Strategy::privatized || strategy == Strategy::aggregated)
      shared_ = std::size_t(p.slots()) * sizeof(unsigned);
    with_rule([&](auto rule) { configure(rule); });
  }

  // `fast` reads a step in place, but where it sorts into buckets.
  bool reads_steps() const override { return strategy_ == Strategy::fast && !bucket_.usable; }

  void run(const Buffer& in, std::int64_t step, const Buffer& counts, bool accumulate) override {
    if (step != 1 && !reads_steps()) throw_invalid("this histogram kernel reads dense input only");
    cuda_.activate();
    auto* out = static_cast<unsigned long long*>(counts.handle());
    if (!accumulate)
      PARPAT_CUDA(cudaMemsetAsync(out, 0, std::size_t(p_.slots()) * 8, cuda_.stream()));
    const T* x = static_cast<const T*>(in.handle());
    with_rule([&](auto rule) { launch(x, step, rule, out); });
  }

  std::size_t temp_bytes() const override { return aux_.bytes() + temp_.bytes(); }

 private:
  // Calls f with the slot rule of this dtype, bins and strategy.
  template <class F>
  void with_rule(F f) {
    if constexpr (sizeof(T) <= 2) {
      if (per_value_) {
        f(PerValueRule{static_cast<const unsigned*>(aux_.handle()), shared_slots_});
        return;
      }
    }
    if constexpr (std::is_integral_v<T> && sizeof(T) >= 4) {
      if (integer_rule_.usable) {
        f(IntegerRuleDevice{integer_rule_});
        return;
      }
    }
    if constexpr (std::is_same_v<T, double> || (std::is_integral_v<T> && sizeof(T) >= 4)) {
      if (double_rule_.usable) {
        f(DoubleRuleDevice{double_rule_, even_rule_device(p_)});
        return;
      }
    }
    if constexpr (std::is_same_v<T, unsigned short>) {
      if (even16_rule_.usable) {
        if (std::isnan(even16_rule_.hi)) {
          with_even16<false>(f);
        } else {
          with_even16<true>(f);
        }
        return;
      }
    }
    with_slot_rule<T>(p_, float_rule_, aux_.handle(), f);
  }

  // Calls f with the 16-bit rule of this dtype (kHi: a value can equal hi).
  template <bool kHi, class F>
  void with_even16(F f) {
    switch (p_.dtype) {
      case DType::int16:
        f(Even16RuleDevice<DType::int16, kHi>{even16_rule_});
        return;
      case DType::float16:
        f(Even16RuleDevice<DType::float16, kHi>{even16_rule_});
        return;
      case DType::bfloat16:
        f(Even16RuleDevice<DType::bfloat16, kHi>{even16_rule_});
        return;
      default:
        f(Even16RuleDevice<DType::uint16, kHi>{even16_rule_});
        return;
    }
  }

  template <class Rule>
  void configure(Rule) {
    const int sms = cuda_.props().multiProcessorCount;
    if constexpr (kFastOnly<Rule>) {
      configure_fast<Rule>(sms);
    } else {
      configure_classic<Rule>(sms);
    }
  }

  template <class Rule>
  void configure_fast(int sms) {
    const auto policy = tuned<HistogramFastPolicy>(device_.info());
    const unsigned rows = kEven16<Rule> ? even16_rule_.rows() : unsigned(p_.slots());
    fast_ = fast_config<T, Rule>(device_.info(), policy, sms, p_, rows);
    if (fast_.global)
      bucket_ = bucket_plan<T, Rule>(device_.info(), policy, sms, fast_.counted, p_.n);
    if (bucket_.usable) temp_ = Buffer(device_, bucket_.bytes);
  }

  template <class Rule>
  void configure_classic(int sms) {
    const void* k = nullptr;
    switch (strategy_) {
      case Strategy::global_atomic:
        k = reinterpret_cast<const void*>(&global_atomic_kernel<T, Rule>);
        break;
      case Strategy::interleaved:
        k = reinterpret_cast<const void*>(&interleaved_kernel<T, Rule>);
        break;
      case Strategy::privatized:
        k = reinterpret_cast<const void*>(&privatized_kernel<T, Rule, false>);
        break;
      case Strategy::aggregated:
        k = reinterpret_cast<const void*>(&privatized_kernel<T, Rule, true>);
        break;
      case Strategy::fast:
        configure_fast<Rule>(sms);
        return;
    }
    if (shared_ > (48u << 10))
      PARPAT_CUDA(
          cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_)));
    blocks_ = blocks_for(sms, k, block_, shared_, p_.n);
  }

  template <class Rule>
  void launch(const T* x, long long step, Rule rule, unsigned long long* out) {
    cudaStream_t st = cuda_.stream();
    const long long n = p_.n;
    const unsigned slots = unsigned(p_.slots());
    if (bucket_.usable) {
      launch_bucketed(bucket_, x, n, rule, fast_.counted, temp_.handle(), out, st);
      return;
    }
    if constexpr (kFastOnly<Rule>) {
      launch_fast(fast_, x, n, step, rule, slots, out, st);
    } else {
      launch_classic(x, step, rule, out, st, n, slots);
    }
  }

  template <class Rule>
  void launch_classic(const T* x, long long step, Rule rule, unsigned long long* out,
                      cudaStream_t st, long long n, unsigned slots) {
    switch (strategy_) {
      case Strategy::global_atomic:
        global_atomic_kernel<T><<<blocks_, block_, 0, st>>>(x, n, rule, out);
        check_launch("histogram global_atomic_kernel");
        return;
      case Strategy::interleaved:
        interleaved_kernel<T><<<blocks_, block_, 0, st>>>(x, n, rule, out);
        check_launch("histogram interleaved_kernel");
        return;
      case Strategy::privatized:
        privatized_kernel<T, Rule, false><<<blocks_, block_, shared_, st>>>(x, n, rule, slots, out);
        check_launch("histogram privatized_kernel");
        return;
      case Strategy::aggregated:
        privatized_kernel<T, Rule, true><<<blocks_, block_, shared_, st>>>(x, n, rule, slots, out);
        check_launch("histogram aggregated_kernel");
        return;
      case Strategy::fast:
        launch_fast(fast_, x, n, step, rule, slots, out, st);
        return;
    }
  }

  Device device_;
  CudaDevice& cuda_;
  HistogramProblem p_;
  Strategy strategy_;
  Buffer aux_;  // bits → slot table (1- and 2-byte input) or explicit edges
  FloatEvenRule float_rule_;
  Even16Rule even16_rule_;         // `fast` only
  IntegerShiftRule integer_rule_;  // `fast` only
  Float64EvenRule double_rule_;    // `fast` only
  bool shared_slots_ = true;       // per value: some slot takes several values
  bool per_value_ = false;         // `fast` counts 1- and 2-byte input per value
  int block_ = 256, blocks_ = 1;
  std::size_t shared_ = 0;
  FastConfig fast_;
  BucketPlan bucket_;  // `fast` sorting rows into buckets where it would count globally
  Buffer temp_;        // the buckets' rows
};

// Fills the bits → slot table of a 1- or 2-byte input on the device with the even rule itself.
__global__ void fill_table_kernel(unsigned* table, DType dtype, unsigned values,
                                  EvenRuleDevice rule) {
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < values) table[v] = rule.slot(table_value(dtype, v));
}

template <Strategy S>
std::unique_ptr<HistogramKernel> make(const Device& d, const HistogramProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<HistogramKernel> {
    return std::make_unique<CudaHistogram<kernel_element_t<decltype(t)>>>(d, p, S);
  });
}

bool supports_any(const HistogramProblem&, const DeviceInfo&) {
  return true;
}

// The privatized variants keep every slot of a block in shared memory.
bool fits_shared(const HistogramProblem& p, const DeviceInfo& d) {
  return std::uint64_t(p.slots()) * sizeof(unsigned) <= d.local_memory;
}

}  // namespace

std::vector<HistogramVariant> cuda_histogram_variants() {
  auto info = [](const char* name, const char* idea, const char* params, const char* limits) {
    return variant_info("histogram", Backend::cuda, name, idea, params, limits);
  };
  return {
      {info("global-atomic", "a contiguous section per thread, one 64-bit global atomic per value",
            "block=256", ""),
       supports_any, make<Strategy::global_atomic>},
      {info("interleaved", "grid-stride (coalesced) reads, one 64-bit global atomic per value",
            "block=256", ""),
       supports_any, make<Strategy::interleaved>, make_cuda_weighted_interleaved},
      {info("privatized",
            "a 32-bit histogram per block in shared memory, added to the 64-bit counts at the end",
            "block=256", "bins + 3 ≤ shared memory per block / 4 (about 58000 on Hopper)"),
       fits_shared, make<Strategy::privatized>},
      {info("aggregated",
            "privatized, and each thread counts a run of equal bins before one shared atomic",
            "block=256", "bins + 3 ≤ shared memory per block / 4 (about 58000 on Hopper)"),
       fits_shared, make<Strategy::aggregated>},
      {info("fast",
            "16-byte loads, 4 in flight; 1-byte input counted per value, 16-bit input from 65536 "
            "bins too (65536 packed counters); float32, 16- and 32-bit integer bins in float "
            "arithmetic (exact: proven error bound, float64 edges near an edge); a lane-striped "
            "shared "
            "histogram (a bank per lane); per-thread runs for skewed data; passes over bin "
            "ranges beyond shared memory; past histogram.fast.max_passes passes, 4- and 8-byte "
            "input sorted into buckets of rows counted in shared memory, other input global "
            "atomics; views of one step (x[::s]) read in place, gathered into vectors a warp "
            "group at a time, but where rows are sorted into buckets",
            "block=1024 striped<=128KiB max_passes=4 bucket_rows=16384",
            "temporary memory: the value table of 1- and 2-byte input, the explicit edges, and "
            "2 bytes a value (in chunks of 256 MiB, and up to 8 pad rows a bucket in each tile) "
            "where rows are sorted into buckets"),
       supports_any, make<Strategy::fast>, make_cuda_weighted_fast},
  };
}

}  // namespace parpat::detail

namespace parpat::cuda {

std::size_t histogram_workspace_bytes(DType dtype, std::int64_t bins) {
  if (!parpat::detail::is_table_dtype(dtype)) return 0;
  return (dtype_size(dtype) == 1 ? 256 : 65536) * sizeof(unsigned);
}

void histogram_even(const void* d_in, DType dtype, std::int64_t n, std::int64_t bins, double lo,
                    double hi, unsigned long long* d_counts, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream) {
  using namespace parpat::detail;
  if (n < 0) throw_invalid("histogram: negative number of values");
  if (bins <= 0 || bins > kMaxHistogramBins)
    throw_invalid("the number of bins must be in [1, 2^26], got " + std::to_string(bins));
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !std::isfinite(hi - lo))
    throw_invalid("the histogram range must be finite with lo < hi");
  if (workspace_bytes < histogram_workspace_bytes(dtype, bins))
    throw_invalid("histogram workspace too small: " + std::to_string(workspace_bytes) + " < " +
                  std::to_string(histogram_workspace_bytes(dtype, bins)) + " bytes");
  HistogramProblem p;
  p.dtype = dtype;
  p.n = n;
  p.bins = bins;
  p.lo = lo;
  p.hi = hi;
  const unsigned slots = unsigned(p.slots());
  PARPAT_CUDA(cudaMemsetAsync(d_counts, 0, std::size_t(slots) * 8, stream));
  if (n == 0) return;
  int ordinal = 0;
  PARPAT_CUDA(cudaGetDevice(&ordinal));
  const DeviceInfo& info = cuda_device_info(ordinal);
  const int sms = info.compute_units;
  const HistogramFastPolicy policy = tuned<HistogramFastPolicy>(info);
  visit_dtype(dtype, [&](auto t) {
    using T = kernel_element_t<decltype(t)>;
    const T* x = static_cast<const T*>(d_in);
    auto run = [&](auto rule) {
      auto c = fast_config<T, decltype(rule)>(info, policy, sms, p, slots);
      launch_fast(c, x, n, 1, rule, slots, d_counts, stream);
    };
    if constexpr (sizeof(T) <= 2) {
      auto* table = static_cast<unsigned*>(d_workspace);
      unsigned values = sizeof(T) == 1 ? 256u : 65536u;
      fill_table_kernel<<<(values + 255) / 256, 256, 0, stream>>>(table, dtype, values,
                                                                  even_rule_device(p));
      check_launch("histogram fill_table_kernel");
      if constexpr (sizeof(T) == 1) {
        run(PerValueRule{table});
        return;
      }
    }
    // This entry point places float32 alone in float arithmetic.
    with_slot_rule<T>(
        p, std::is_same_v<T, float> ? FloatEvenRule(p, kIeeeSubnormals) : FloatEvenRule(),
        d_workspace, run);
  });
}

}  // namespace parpat::cuda
