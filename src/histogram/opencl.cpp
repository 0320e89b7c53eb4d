// OpenCL histogram variants: histogram.cl built per (dtype, bin rule, 64-bit atomics) and launched
// with workspaces sized once. The same names and ideas as the CUDA variants. bool and the 1- and
// 2-byte integers are read as uchar/ushort and placed through a bits → slot table. `fast` counts
// rows (below the range, the bins, above it, NaN), mapped to slots as counts leave local memory;
// it counts 1-byte input per value (256 counters whatever the bins, mapped to slots when a group
// flushes), int16 and uint16 per value from histogram.fast.per_value16_min_bins bins, float16 and
// bfloat16 from per_value_float16_min_bins (on NVIDIA 65536): the values of a window that holds
// those in the bins, and rows for those outside it, or a row per value's bits (opencl_layout.hpp),
// in packed fields whose groups add their rows to a table of the rows (32- or 64-bit words), which
// a second kernel (spread_values) adds to the slots through the value table (a row per value's
// bits in one range of 5-bit fields, as int16 and uint16 on NVIDIA: fast_values16, a kernel of few
// registers in groups of 1024, two of them to a multiprocessor). Values are placed by
// the exact rules of ClBinRule: Even16Rule for 16-bit input (one multiply-add, checked on the host
// for every value; hi in a row of its own where it can be), IntegerShiftRule for 4- and 8-byte
// integers with power-of-two bin widths, Float64EvenRule for float64 (and 4- and 8-byte integers
// that no other rule takes, converted to float64), and the float even rule (FloatEvenRule) for
// float32, 16-bit and 32-bit input where its bound holds (the rare value near an edge settled
// against the float64 edges where the device has cl_khr_fp64, histogram.opencl.float_edges; else
// against a threshold table). Counts go into one local histogram per group: lane-striped 32-bit
// counters in as many columns (a power of two up to 32) as histogram.fast.striped_kib allows, so
// the lanes of a warp hit their own banks (on NVIDIA each add is one red.shared on a 32-bit
// address); for bfloat16 the rows are permuted within each turn of the banks below 8 columns and
// padded to an odd stride in 8, so the rows a power of two apart that it crowds do not share one.
// Rows beyond local memory are split into ranges counted side by side by sets of groups over the
// same input chunk (read once from memory, then from L2), in packed counters where 32-bit ones
// would need more than one range (histogram.opencl.packed): fields of 16, 8 or 5 bits, the widest
// that needs the fewest ranges, so 65536 rows fit one range of 5-bit fields in 48 KiB (each range
// re-places every value); past histogram.fast.max_passes ranges, and for float16 and bfloat16
// (whose crowded rows would wrap narrow fields) past 16-bit fields, the kernel counts straight into
// global memory, where a cheap test per 16-byte vector sends skewed data through runs of equal rows
// kept in registers (one atomic per run; where histogram.opencl.bucketed says so, by default on
// NVIDIA, 4- and 8-byte input sorts its rows into buckets counted in local memory instead,
// opencl_bucketed.hpp). In local memory the runs are off by default
// (histogram.fast.runs_below_columns): OpenCL 1.2 has no warp vote, so each work-item decides, and
// the split warps cost more than the atomics they save.
#include <algorithm>
#include <string>
#include <type_traits>

#include "histogram/histogram_internal.hpp"
#include "histogram/opencl_bucketed.hpp"
#include "histogram/opencl_layout.hpp"
#include "histogram/opencl_rule.hpp"
#include "histogram/tuning.hpp"
#include "runtime/opencl/opencl_device.hpp"

extern const char* const parpat_cl_histogram_rules;
extern const char* const parpat_cl_histogram;
extern const char* const parpat_cl_histogram_sink;

namespace parpat::detail {

namespace {

enum class Strategy { global_atomic, interleaved, privatized, aggregated, fast };

class OpenclHistogram final : public HistogramKernel {
 public:
  OpenclHistogram(const Device& d, const HistogramProblem& p, Strategy strategy)
      : cl_(backend_cast<OpenclDevice>(d)),
        p_(p),
        strategy_(strategy),
        layout_(strategy == Strategy::fast
                    ? fast_layout(p, d.info(), tuned<HistogramFastPolicy>(d.info()),
                                  tuned<HistogramOpenclPolicy>(d.info()),
                                  static_cast<std::uint32_t>(p.slots()))
                    : FastLayout{}),
        rule_(d, p, strategy == Strategy::fast, layout_.count_values, strategy == Strategy::fast,
              layout_.values16 ? &layout_.window : nullptr) {
    const auto& info = d.info();
    const bool fast = strategy == Strategy::fast;
    const HistogramFastPolicy fast_policy = tuned<HistogramFastPolicy>(info);
    const HistogramOpenclPolicy opencl_policy = tuned<HistogramOpenclPolicy>(info);
    const HistogramClassicPolicy classic_policy = tuned<HistogramClassicPolicy>(info);
    // The 16-bit rule's hi row is one row more than the slots: the rows are laid out again.
    if (fast && !layout_.count_values && rule_.rows() != layout_.counted)
      layout_ = fast_layout(p, info, fast_policy, opencl_policy, rule_.rows());
    std::string options = rule_.options();
    local_size_ = static_cast<std::size_t>(fast ? fast_policy.block : classic_policy.block);
    local_size_ =
        std::clamp<std::size_t>(local_size_, 1, static_cast<std::size_t>(info.max_group_size));
    const std::uint32_t slots = static_cast<std::uint32_t>(p.slots());
    const char* name = "global_atomic";
    std::int64_t per_group = 1;  // values one work-item reads per step
    switch (strategy) {
      case Strategy::global_atomic:
        break;
      case Strategy::interleaved:
        name = "interleaved";
        break;
      case Strategy::privatized:
        name = "privatized";
        local_bytes_ = std::size_t{slots} * 4;
        break;
      case Strategy::aggregated:
        name = "aggregated";
        local_bytes_ = std::size_t{slots} * 4;
        break;
      case Strategy::fast: {
        name = layout_.global         ? "fast_global"
               : one_range_values16() ? "fast_values16"
                                      : "fast_local";
        local_bytes_ = layout_.local_bytes;
        options += " -DCOLUMNS=" + std::to_string(layout_.columns) +
                   " -DPERMUTED_ROWS=" + (layout_.permuted_rows ? "1" : "0") +
                   " -DPADDED_ROWS=" + (layout_.padded_rows ? "1" : "0") +
                   " -DRUNS=" + (layout_.runs ? "1" : "0") +
                   " -DWHOLE=" + (layout_.passes == 1 ? "1" : "0") +
                   " -DFIELD_BITS=" + std::to_string(layout_.field_bits) +
                   " -DHOT_ENTRIES=" + std::to_string(layout_.hot_entries) +
                   " -DDENSE_VALUES=" + std::to_string(dense_row_bytes() * 8) + " -DCOUNT_VALUES=" +
                   std::to_string(layout_.count_values ? dtype_size(p.dtype) : 0) + " -DUNROLL=" +
                   std::to_string(vectors_in_flight(layout_, p.dtype, fast_policy, opencl_policy)) +
                   " -DVALUES16_GROUP=" + std::to_string(local_size_);
        if (info.vendor.find("NVIDIA") != std::string::npos && opencl_policy.ptx)
          options += " -DNVIDIA_PTX=1";
        per_group = 16 / static_cast<std::int64_t>(dtype_size(p.dtype));
        break;
      }
    }
    if (fast) bucketed_ = OpenclBucketedCount::make(d, p, layout_, options);
    if (bucketed_) return;  // the global kernel would never run
    static const std::string source =
        std::string(parpat_cl_histogram_rules) + parpat_cl_histogram_sink + parpat_cl_histogram;
    kernel_ = cl_.kernel("histogram.cl", source, options, name);
    if (dense_values()) {
      spread_ = cl_.kernel("histogram.cl", source, options, "spread_values");
      value_rows_ = Buffer(d, std::size_t{layout_.counted} * dense_row_bytes());
    }
    // A kernel's registers may allow fewer work-items than the device (NVIDIA reports 256 for
    // fast_local); fast_values16 runs in the groups it was built for.
    try {
      if (!one_range_values16())
        local_size_ = std::min(local_size_,
                               kernel_.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(cl_.device()));
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
    // Groups of `fast` come in sets of `passes` (one per slot range) over the same chunk.
    // Global counting ends with one add per work-item's run, all on one slot for all-equal
    // data, so it takes the resident grid only (H200, float32 at 2^20 bins, µs: all-equal 440
    // with 8 groups per compute unit, 290 with 2; uniform 2694 → 2666).
    const std::int64_t per_cu =
        !fast            ? classic_policy.groups_per_cu
        : layout_.global ? opencl_policy.global_groups_per_cu
        : layout_.values16 && !layout_.narrow_fields()
            ? opencl_policy.per_value16_groups_per_cu
            : local_groups_per_cu(layout_, p.n, info, fast_policy, opencl_policy);
    const auto local = static_cast<std::int64_t>(local_size_);
    const std::int64_t passes = fast && !layout_.global ? layout_.passes : 1;
    std::int64_t chunks =
        static_cast<std::int64_t>(info.compute_units) * std::max<std::int64_t>(per_cu, 1) / passes;
    chunks = std::min<std::int64_t>(chunks, (p.n + per_group * local - 1) / (per_group * local));
    chunks = std::max<std::int64_t>(chunks, (p.n + kMaxValuesPerGroup - 1) / kMaxValuesPerGroup);
    groups_ = static_cast<std::size_t>(std::max<std::int64_t>(chunks, 1) * passes);
  }

  // `fast` reads a step in place, but where it sorts into buckets.
  bool reads_steps() const override { return strategy_ == Strategy::fast && !bucketed_; }

  void run(const Buffer& in, std::int64_t step, const Buffer& counts, bool accumulate) override {
    if (step != 1 && !reads_steps()) throw_invalid("this histogram kernel reads dense input only");
    try {
      cl_ulong zero = 0;
      if (!accumulate)
        cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(counts.handle()), true), zero, 0,
                                      static_cast<std::size_t>(p_.slots()) * 8);
      if (bucketed_) {
        bucketed_->run(in, counts, rule_);
        return;
      }
      cl::Kernel& k = kernel_;
      if (strategy_ == Strategy::fast && !layout_.global) {
        const Buffer& sink = dense_values() ? value_rows_ : counts;
        if (dense_values())
          cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(sink.handle()), true), cl_uint{0}, 0,
                                        sink.bytes());
        cl_uint i = set_common(k, in, step);
        set_args_from(k, i, layout_.passes, layout_.range, layout_.counted, cl::Local(local_bytes_),
                      as_mem(sink.handle()));
        cl_.launch(k, groups_ * local_size_, local_size_);
        if (dense_values()) spread(counts);
        return;
      }
      cl_uint i = set_common(k, in, step);
      if (strategy_ == Strategy::privatized || strategy_ == Strategy::aggregated)
        set_args_from(k, i, static_cast<cl_uint>(p_.slots()), cl::Local(local_bytes_),
                      as_mem(counts.handle()));
      else if (strategy_ == Strategy::fast)  // fast_global
        set_args_from(k, i, rule_.rows(), as_mem(counts.handle()));
      else
        set_args_from(k, i, as_mem(counts.handle()));
      cl_.launch(k, groups_ * local_size_, local_size_);
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }

  std::size_t temp_bytes() const override {
    return rule_.temp_bytes() + (bucketed_ ? bucketed_->temp_bytes() : 0) + value_rows_.bytes();
  }

 private:
  // 16-bit input counted per value in local memory: fast_local (or fast_values16) adds its rows
  // to a table of the rows (value_rows_), which spread_values then adds to the slots.
  bool dense_values() const {
    return strategy_ == Strategy::fast && layout_.values16 && !layout_.global;
  }
  // 16-bit input counted per value, a row per bit pattern, in one range of fields narrower than
  // 8 bits that leave spare bits atop their word (5-bit): fast_values16, a kernel of its own with
  // few registers.
  bool one_range_values16() const {
    return dense_values() && layout_.window.by_bits && layout_.passes == 1 &&
           layout_.narrow_fields() && 32 % layout_.field_bits != 0;
  }
  // The bytes of a row of that table: 4 where every total fits 32 bits (and
  // histogram.opencl.value_row_bits allows), else 8; 0 without it.
  std::size_t dense_row_bytes() const {
    if (!dense_values()) return 0;
    const bool narrow = tuned<HistogramOpenclPolicy>(cl_.info()).value_row_bits == 32;
    return narrow && p_.n < (std::int64_t{1} << 32) ? 4 : 8;
  }

  // Adds the table of value rows to the counts: a stretch of kSpreadRows rows a work-item.
  void spread(const Buffer& counts) {
    constexpr std::uint32_t kSpreadRows = 16, kGroup = 256;
    const cl_uint i = set_args_from(spread_, 0, as_mem(value_rows_.handle()), layout_.counted);
    set_args_from(spread_, rule_.bind(spread_, i), as_mem(counts.handle()));
    const std::size_t items = (layout_.counted + kSpreadRows - 1) / kSpreadRows;
    cl_.launch(spread_, (items + kGroup - 1) / kGroup * kGroup, kGroup);
  }

  // Binds the input, its size (and for `fast` the step between its values) and the bin rule's
  // parameters; returns the next argument index.
  cl_uint set_common(cl::Kernel& k, const Buffer& in, std::int64_t step) {
    set_arg(k, 0, as_mem(in.handle()));
    set_arg(k, 1, static_cast<cl_long>(p_.n));
    if (strategy_ != Strategy::fast) return rule_.bind(k, 2);
    set_arg(k, 2, static_cast<cl_long>(step));
    return rule_.bind(k, 3);
  }

  OpenclDevice& cl_;
  HistogramProblem p_;
  Strategy strategy_;
  FastLayout layout_;
  ClBinRule rule_;
  cl::Kernel kernel_, spread_;
  Buffer value_rows_;  // the rows of 16-bit input counted per value (dense_values)
  std::unique_ptr<OpenclBucketedCount> bucketed_;  // `fast` sorting rows into buckets
  std::size_t local_size_ = 256, groups_ = 1, local_bytes_ = 0;
};

template <Strategy S>
std::unique_ptr<HistogramKernel> make(const Device& d, const HistogramProblem& p) {
  return std::make_unique<OpenclHistogram>(d, p, S);
}

// Float64 bin rules need cl_khr_fp64; the value tables of 1- and 2-byte input do not.
bool supports_any(const HistogramProblem& p, const DeviceInfo& d) {
  return table_rule(p) || d.fp64;
}

bool fits_local(const HistogramProblem& p, const DeviceInfo& d) {
  return supports_any(p, d) && std::uint64_t(p.slots()) * 4 <= local_budget(d);
}

// `fast` places float32 values in float arithmetic wherever FloatEvenRule's bound holds.
bool supports_fast(const HistogramProblem& p, const DeviceInfo& d) {
  return supports_any(p, d) || (p.dtype == DType::float32 && p.even && FloatEvenRule(p).usable);
}

}  // namespace

std::vector<HistogramVariant> opencl_histogram_variants() {
  auto info = [](const char* name, const char* idea, const char* params, const char* limits) {
    return variant_info("histogram", Backend::opencl, name, idea, params, limits);
  };
  const char* fp64 = "input of 4 or 8 bytes needs cl_khr_fp64";
  return {
      {info("global-atomic",
            "a contiguous section per work-item, one 64-bit global atomic per value", "group=256",
            fp64),
       supports_any, make<Strategy::global_atomic>},
      {info("interleaved", "grid-stride (coalesced) reads, one 64-bit global atomic per value",
            "group=256", fp64),
       supports_any, make<Strategy::interleaved>, make_opencl_weighted_interleaved},
      {info("privatized",
            "a 32-bit histogram per group in local memory, added to the 64-bit counts at the end",
            "group=256",
            "bins + 3 ≤ local memory / 4, at most 12285 bins (48 KiB); input of 4 or 8 bytes "
            "needs cl_khr_fp64"),
       fits_local, make<Strategy::privatized>},
      {info("aggregated",
            "privatized, and each work-item counts a run of equal bins before one local atomic",
            "group=256",
            "bins + 3 ≤ local memory / 4, at most 12285 bins (48 KiB); input of 4 or 8 bytes "
            "needs cl_khr_fp64"),
       fits_local, make<Strategy::aggregated>},
      {info(
           "fast",
           "16-byte vector loads, several in flight per work-item; 1-byte input counted per value "
           "(mapped to slots at the flush), 16-bit input too from 65536 bins (the values that "
           "can fall in a bin, in key order, or a row per value's bits, in packed fields, added to "
           "a table of the rows and then to the slots); values "
           "placed by exact rules: one multiply-add for 16-bit input "
           "(checked on the host for every value), shifts for 4- and 8-byte integers with "
           "power-of-two widths, "
           "float and float64 rules settled against the float64 edges near an edge; one "
           "lane-striped local histogram per group (up to 32 columns, "
           "one bank per lane); red.shared on 32-bit addresses on NVIDIA; slots beyond "
           "32-bit counters in local memory in packed 16/8/5-bit counters (the widest in the "
           "fewest ranges; carries to the global counts, hot rows' carries in a local table), "
           "ranges counted side by side by groups sharing an input chunk through L2; global "
           "atomics with register runs of equal slots past histogram.fast.max_passes ranges "
           "(or, with histogram.opencl.bucketed, 4- and 8-byte rows sorted into buckets counted "
           "in local memory); views of one step (x[::s]) read in place, gathered into vectors "
           "32 work-items at a time, but where rows are sorted into buckets",
           "group=1024 groups/CU=8 (2 counting globally; 5-bit fields: 2-8, about 8 values a "
           "row each) vectors=8 (4-byte input on NVIDIA: "
           "4, in 5- or 4-bit fields 6) striped<=96KiB columns<=32 "
           "runs_below_columns=0 (global counting only) packed fields>=5 bits hot_entries=256 "
           "max_passes=4 per value: 8-bit fields, groups/CU=2 (int16 and uint16 on NVIDIA: "
           "5-bit fields in one range, one vector a work-item in groups of 1024 (a kernel of its "
           "own), groups/CU as 5-bit fields take; float16 and "
           "bfloat16: 16-bit fields)",
           "no warp aggregation (OpenCL 1.2 has no warp vote); integer input of 4 or 8 bytes, "
           "float64 input, explicit edges and float32 ranges beyond the float rule's bound need "
           "cl_khr_fp64"),
       supports_fast, make<Strategy::fast>, make_opencl_weighted_fast},
  };
}

}  // namespace parpat::detail
