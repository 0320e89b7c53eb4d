// OpenCL histogram variants: histogram.cl built per (dtype, bin rule, 64-bit atomics) and
// launched with workspaces sized once. The same names and ideas as the CUDA variants; `fast`
// makes passes over slot ranges when the slots exceed local memory and counts straight into
// global memory past histogram.fast.max_passes passes.
#include <algorithm>
#include <string>
#include <type_traits>

#include "histogram/histogram_internal.hpp"
#include "runtime/opencl/opencl_device.hpp"
#include "runtime/tuning.hpp"

extern const char* const parpat_cl_histogram;

namespace parpat::detail {

namespace {

enum class Strategy { global_atomic, interleaved, privatized, aggregated, fast };

constexpr std::int64_t kMaxValuesPerGroup = std::int64_t{1} << 30;

// One kernel argument: cl_mem handles by size and address (the C++ bindings refuse raw
// pointers), cl::Local sizes and scalars through the bindings.
template <class T>
void set_arg(cl::Kernel& k, cl_uint index, const T& value) {
  if constexpr (std::is_pointer_v<T>) {
    k.setArg(index, sizeof(T), &value);
  } else {
    k.setArg(index, value);
  }
}

const char* cl_type(DType t) {
  switch (t) {
    case DType::uint8:
      return "uchar";
    case DType::uint16:
      return "ushort";
    case DType::int32:
      return "int";
    case DType::float32:
      return "float";
    default:
      return "double";
  }
}

bool table_rule(const HistogramProblem& p) {
  return p.dtype == DType::uint8 || p.dtype == DType::uint16;
}

// Local memory one group may use: what the device reports, at most 48 KiB (NVIDIA's limit
// per group under OpenCL).
std::uint64_t local_budget(const DeviceInfo& d) {
  return std::min<std::uint64_t>(d.local_memory, 48u << 10);
}

class OpenclHistogram final : public HistogramKernel {
 public:
  OpenclHistogram(const Device& d, const HistogramProblem& p, Strategy strategy)
      : device_(d), cl_(backend_cast<OpenclDevice>(d)), p_(p), strategy_(strategy), rule_(p) {
    const auto& info = d.info();
    const int rule = table_rule(p) ? 0 : p.even ? 1 : 2;
    if (rule == 0) {
      auto table = slot_table(p);
      aux_ = Buffer(d, table.size() * sizeof(std::uint32_t));
      aux_.upload(table.data(), aux_.bytes());
    } else if (rule == 2) {
      aux_ = Buffer(d, p.edges.size() * sizeof(double));
      aux_.upload(p.edges.data(), aux_.bytes());
    }
    std::string options = std::string("-DT=") + cl_type(p.dtype) +
                          " -DVEC=" + std::to_string(16 / dtype_size(p.dtype)) +
                          " -DRULE=" + std::to_string(rule) +
                          " -DINT64_ATOMICS=" + (info.int64_atomics ? "1" : "0");
    const std::uint32_t slots = static_cast<std::uint32_t>(p.slots());
    local_size_ = static_cast<std::size_t>(
        tuning(info, strategy == Strategy::fast ? "histogram.fast.block" : "histogram.block", 256));
    local_size_ = std::min<std::size_t>(local_size_, static_cast<std::size_t>(info.max_group_size));
    const char* name = "global_atomic";
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
        auto cap = static_cast<std::uint32_t>(local_budget(info) / 4);
        passes_ = (slots + cap - 1) / cap;
        range_ = (slots + passes_ - 1) / passes_;
        auto replica_bytes =
            static_cast<std::uint32_t>(tuning(info, "histogram.fast.replica_kib", 16)) << 10;
        replicas_ = std::clamp<std::uint32_t>(replica_bytes / (range_ * 4), 1, 8);
        while (replicas_ > 1 && std::uint64_t{range_} * replicas_ * 4 > local_budget(info))
          --replicas_;
        global_ =
            passes_ > static_cast<std::uint32_t>(tuning(info, "histogram.fast.max_passes", 4));
        name = global_ ? "fast_global" : "fast_local";
        local_bytes_ = global_ ? 0 : std::size_t{range_} * replicas_ * 4;
        break;
      }
    }
    kernel_ = &cl_.kernel("histogram.cl", parpat_cl_histogram, options, name);
    auto groups =
        static_cast<std::int64_t>(info.compute_units) * tuning(info, "histogram.groups_per_cu", 8);
    groups = std::min<std::int64_t>(groups, (p.n + static_cast<std::int64_t>(local_size_) - 1) /
                                                static_cast<std::int64_t>(local_size_));
    groups = std::max<std::int64_t>(groups, (p.n + kMaxValuesPerGroup - 1) / kMaxValuesPerGroup);
    groups_ = static_cast<std::size_t>(std::max<std::int64_t>(groups, 1));
  }

  void run(const Buffer& in, const Buffer& counts) override {
    try {
      cl_ulong zero = 0;
      cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(counts.handle()), true), zero, 0,
                                    static_cast<std::size_t>(p_.slots()) * 8);
      cl::Kernel& k = *kernel_;
      if (strategy_ == Strategy::fast && !global_) {
        for (std::uint32_t pass = 0; pass < passes_; ++pass) {
          std::uint32_t first = pass * range_;
          std::uint32_t range = std::min(range_, static_cast<std::uint32_t>(p_.slots()) - first);
          cl_uint i = set_common(k, in);
          set_args_from(k, i, first, range, replicas_, cl::Local(local_bytes_),
                        as_mem(counts.handle()));
          cl_.launch(k, groups_ * local_size_, local_size_);
        }
        return;
      }
      cl_uint i = set_common(k, in);
      if (strategy_ == Strategy::privatized || strategy_ == Strategy::aggregated)
        set_args_from(k, i, static_cast<cl_uint>(p_.slots()), cl::Local(local_bytes_),
                      as_mem(counts.handle()));
      else
        set_args_from(k, i, as_mem(counts.handle()));
      cl_.launch(k, groups_ * local_size_, local_size_);
    } catch (const cl::Error& e) {
      rethrow_opencl(e);
    }
  }

  std::size_t temp_bytes() const override { return aux_.bytes(); }

 private:
  template <class... Args>
  void set_args_from(cl::Kernel& k, cl_uint first, const Args&... args) {
    (set_arg(k, first++, args), ...);
  }

  // Binds the input, its size and the bin rule's parameters; returns the next argument index.
  cl_uint set_common(cl::Kernel& k, const Buffer& in) {
    set_arg(k, 0, as_mem(in.handle()));
    set_arg(k, 1, static_cast<cl_long>(p_.n));
    if (table_rule(p_)) {
      set_arg(k, 2, as_mem(aux_.handle()));
      return 3;
    }
    if (p_.even) {
      set_args_from(k, 2, static_cast<cl_long>(rule_.bins), rule_.lo, rule_.hi, rule_.step,
                    rule_.norm);
      return 7;
    }
    set_args_from(k, 2, as_mem(aux_.handle()), static_cast<cl_long>(p_.bins));
    return 4;
  }

  Device device_;
  OpenclDevice& cl_;
  HistogramProblem p_;
  Strategy strategy_;
  EvenRule rule_;
  Buffer aux_;  // value → slot table (uint8/uint16) or explicit edges
  cl::Kernel* kernel_ = nullptr;
  std::size_t local_size_ = 256, groups_ = 1, local_bytes_ = 0;
  std::uint32_t passes_ = 1, range_ = 0, replicas_ = 1;
  bool global_ = false;
};

template <Strategy S>
std::unique_ptr<HistogramKernel> make(const Device& d, const HistogramProblem& p) {
  return std::make_unique<OpenclHistogram>(d, p, S);
}

// Float64 bin rules need cl_khr_fp64; the value tables of uint8/uint16 do not.
bool supports_any(const HistogramProblem& p, const DeviceInfo& d) {
  return table_rule(p) || d.fp64;
}

bool fits_local(const HistogramProblem& p, const DeviceInfo& d) {
  return supports_any(p, d) && std::uint64_t(p.slots()) * 4 <= local_budget(d);
}

}  // namespace

std::vector<HistogramVariant> opencl_histogram_variants() {
  auto info = [](const char* name, const char* idea, const char* params, const char* limits) {
    VariantInfo v;
    v.pattern = "histogram";
    v.backend = "opencl";
    v.name = name;
    v.idea = idea;
    v.params = params;
    v.limits = limits;
    v.is_default = std::string(name) == "fast";
    return v;
  };
  const char* fp64 = "int32/float32/float64 input needs cl_khr_fp64";
  return {
      {info("global-atomic",
            "a contiguous section per work-item, one 64-bit global atomic per value", "group=256",
            fp64),
       supports_any, make<Strategy::global_atomic>},
      {info("interleaved", "grid-stride (coalesced) reads, one 64-bit global atomic per value",
            "group=256", fp64),
       supports_any, make<Strategy::interleaved>},
      {info("privatized",
            "a 32-bit histogram per group in local memory, added to the 64-bit counts at the end",
            "group=256",
            "bins + 3 ≤ local memory / 4, at most 12285 bins (48 KiB); int32/float input needs "
            "cl_khr_fp64"),
       fits_local, make<Strategy::privatized>},
      {info("aggregated",
            "privatized, and each work-item counts a run of equal bins before one local atomic",
            "group=256",
            "bins + 3 ≤ local memory / 4, at most 12285 bins (48 KiB); int32/float input needs "
            "cl_khr_fp64"),
       fits_local, make<Strategy::aggregated>},
      {info("fast",
            "16-byte vector loads, local sub-histogram replicas, run aggregation per work-item, "
            "passes over bin ranges beyond local memory, global atomics past "
            "histogram.fast.max_passes passes",
            "group=256 replicas<=16KiB max_passes=4",
            "no warp aggregation (OpenCL 1.2 has no warp vote); int32/float input needs "
            "cl_khr_fp64"),
       supports_any, make<Strategy::fast>},
  };
}

}  // namespace parpat::detail
