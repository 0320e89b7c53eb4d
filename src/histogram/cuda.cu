// CUDA histogram variants. Every variant maps a value to a slot (bins, then underflow, overflow
// and NaN) with one of three rules: a value → slot table for uint8/uint16 (filled on the host by
// the reference, so exact), the even rule (a float64 candidate (x − lo)·N/(hi − lo) corrected
// against the exact edges i·step + lo, computed with __dmul_rn/__dadd_rn so no FMA changes an
// edge), or a binary search over explicit edges. Counts are 64-bit in global memory.
//  - global-atomic: each thread a contiguous section, one global 64-bit atomic per value;
//  - interleaved: grid-stride (coalesced) reads, global atomics;
//  - privatized: a 32-bit histogram per block in shared memory, added to the global counts at
//    the end (blocks are sized so no block sees 2^31 values: 32-bit counts cannot wrap);
//  - aggregated: privatized, and each thread counts a run of equal slots before one atomic;
//  - fast: 16-byte loads, one shared sub-histogram per warp (or per group of warps) against
//    same-address contention, warp aggregation for skewed data (a ballot against lane 0's slot
//    first; __match_any_sync when several lanes share slots), 32-bit shared counts flushed to
//    64-bit global ones. When the slots do not fit in shared memory the kernel makes passes over
//    slot ranges (each pass reads the input again and counts only its range); past
//    `histogram.fast.max_passes` passes it counts straight into global memory with the same warp
//    aggregation. No temporary memory besides the table or the edges.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "histogram/histogram_internal.hpp"
#include "parpat/cuda/histogram.cuh"
#include "parpat/error.hpp"
#include "runtime/cuda/cuda_device.hpp"
#include "runtime/tuning.hpp"

namespace parpat::detail {

namespace {

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
    long long c = t < double(bins) ? (long long)t : bins - 1;
    while (c > 0 && x < edge(c))
      --c;
    while (c < bins - 1 && x >= edge(c + 1))
      ++c;
    return unsigned(c);
  }
};

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

template <class T, class Rule>
__global__ void global_atomic_kernel(const T* __restrict__ in, long long n, Rule rule,
                                     unsigned long long* counts) {
  long long threads = (long long)gridDim.x * blockDim.x;
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long per = (n + threads - 1) / threads;
  long long begin = t * per, end = min(n, begin + per);
  for (long long i = begin; i < end; ++i)
    atomicAdd(counts + rule.slot(in[i]), 1ull);
}

template <class T, class Rule>
__global__ void interleaved_kernel(const T* __restrict__ in, long long n, Rule rule,
                                   unsigned long long* counts) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(counts + rule.slot(in[i]), 1ull);
}

// Adds a block's shared counts to the global ones: one atomic per non-empty slot.
__device__ void flush(const unsigned* hist, unsigned slots, unsigned replicas,
                      unsigned long long* counts) {
  for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) {
    unsigned long long sum = 0;
    for (unsigned r = 0; r < replicas; ++r)
      sum += hist[r * slots + s];
    if (sum) atomicAdd(counts + s, sum);
  }
}

template <class T, class Rule, bool kAggregate>
__global__ void privatized_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned slots,
                                  unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  for (unsigned s = threadIdx.x; s < slots; s += blockDim.x)
    hist[s] = 0;
  __syncthreads();
  long long stride = (long long)gridDim.x * blockDim.x;
  unsigned run_slot = kNone, run = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned s = rule.slot(in[i]);
    if constexpr (kAggregate) {
      if (s == run_slot) {
        ++run;
        continue;
      }
      if (run) atomicAdd(hist + run_slot, run);
      run_slot = s;
      run = 1;
    } else {
      atomicAdd(hist + s, 1u);
    }
  }
  if (kAggregate && run) atomicAdd(hist + run_slot, run);
  __syncthreads();
  flush(hist, slots, 1, counts);
}

// Counts slot s (kNone: nothing) of every lane of a converged warp into `hist`: when most
// lanes agree with lane 0 one atomic covers them; when a few lanes share slots,
// __match_any_sync groups them; otherwise one atomic per lane. Counter is unsigned (shared)
// or unsigned long long (global).
template <class Counter>
__device__ void warp_count(Counter* hist, unsigned s, unsigned lane) {
  unsigned leader_slot = __shfl_sync(0xFFFFFFFFu, s, 0);
  unsigned same = __ballot_sync(0xFFFFFFFFu, s == leader_slot);
  int agree = __popc(same);
  if (agree == 32) {
    if (lane == 0 && s != kNone) atomicAdd(hist + s, Counter(32));
    return;
  }
  if (agree >= 4) {
    unsigned peers = __match_any_sync(0xFFFFFFFFu, s);
    if (s != kNone && lane == unsigned(__ffs(peers) - 1))
      atomicAdd(hist + s, Counter(__popc(peers)));
    return;
  }
  if (s != kNone) atomicAdd(hist + s, Counter(1));
}

// The fast kernel's main loop: 16-byte vectors in a warp-uniform grid-stride loop (every lane
// of a warp iterates equally often, so the warp intrinsics see a converged warp), each value's
// slot shifted into the pass's range [first, first + range) and counted into `hist`. One vote
// per vector decides how the warp counts its 32·kVec values: when few lanes share lane 0's
// first slot (spread data) plain atomics; otherwise (skewed data) warp aggregation per value.
template <class T, class Rule, class Counter>
__device__ void count_values(const T* __restrict__ in, long long n, const Rule& rule,
                             unsigned first, unsigned range, Counter* hist) {
  constexpr int kVec = 16 / sizeof(T);
  const unsigned lane = threadIdx.x % 32;
  // Elements before the first 16-byte boundary, and after the last whole vector.
  long long head = (long long)((16 - (reinterpret_cast<unsigned long long>(in) % 16)) % 16) /
                   (long long)sizeof(T);
  head = min(head, n);
  long long vectors = (n - head) / kVec;
  long long tail_begin = head + vectors * kVec;
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  long long warps = (long long)gridDim.x * (blockDim.x / 32);
  long long warp = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  auto shift = [&](unsigned s) { return s - first < range ? s - first : kNone; };
  for (long long base = warp * 32; base < vectors; base += warps * 32) {
    long long v = base + lane;
    uint4 raw = make_uint4(0, 0, 0, 0);
    if (v < vectors) raw = __ldcs(vec + v);
    T values[kVec];
    memcpy(values, &raw, sizeof raw);
    unsigned slots[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      slots[k] = v < vectors ? shift(rule.slot(values[k])) : kNone;
    unsigned leader = __shfl_sync(0xFFFFFFFFu, slots[0], 0);
    unsigned same = __ballot_sync(0xFFFFFFFFu, slots[0] == leader && leader != kNone);
    if (__popc(same) >= 4) {
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        warp_count(hist, slots[k], lane);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        if (slots[k] != kNone) atomicAdd(hist + slots[k], Counter(1));
    }
  }
  // At most 2·kVec − 2 leftover values: warp 0 of the grid takes them, one per lane.
  if (warp == 0) {
    long long leftover = head + (n - tail_begin);
    for (long long base = 0; base < leftover; base += 32) {
      long long j = base + lane;
      long long i = j < head ? j : tail_begin + (j - head);
      warp_count(hist, j < leftover ? shift(rule.slot(in[i])) : kNone, lane);
    }
  }
}

template <class T, class Rule>
__global__ void fast_shared_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned first,
                                   unsigned range, unsigned replicas, unsigned long long* counts) {
  extern __shared__ unsigned hist[];
  __shared__ unsigned table[sizeof(T) == 1 ? 256 : 1];
  for (unsigned s = threadIdx.x; s < range * replicas; s += blockDim.x)
    hist[s] = 0;
  Rule local = rule;
  if constexpr (sizeof(T) == 1 && std::is_same_v<Rule, TableRule>) {
    for (unsigned v = threadIdx.x; v < 256; v += blockDim.x)
      table[v] = rule.table[v];
    local.table = table;
  }
  __syncthreads();
  unsigned* mine = hist + (threadIdx.x / 32) % replicas * range;
  count_values(in, n, local, first, range, mine);
  __syncthreads();
  flush(hist, range, replicas, counts + first);
}

template <class T, class Rule>
__global__ void fast_global_kernel(const T* __restrict__ in, long long n, Rule rule, unsigned slots,
                                   unsigned long long* counts) {
  count_values(in, n, rule, 0u, slots, counts);
}

enum class Strategy { global_atomic, interleaved, privatized, aggregated, fast };

int blocks_for(int sms, const void* kernel, int block, std::size_t shared, long long n) {
  int per_sm = 0;
  PARPAT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, shared));
  long long blocks = (long long)std::max(per_sm, 1) * sms;
  blocks = std::min(blocks, (n + block - 1) / block);
  blocks = std::max(blocks, (n + kMaxValuesPerBlock - 1) / kMaxValuesPerBlock);
  return int(std::max(blocks, 1ll));
}

// How `fast` runs one problem: shared passes over slot ranges with `replicas` sub-histograms,
// or warp-aggregated global atomics when the passes would be too many.
struct FastConfig {
  int block = 512, blocks = 1;
  std::size_t shared = 0;
  unsigned passes = 1, range = 0, replicas = 1;
  bool global = false;
};

template <class T, class Rule>
FastConfig fast_config(const DeviceInfo& info, int sms, unsigned slots, long long n) {
  FastConfig c;
  c.block = tuning(info, "histogram.fast.block", 512);
  // Below the opt-in maximum, leaving room for the static value table.
  std::size_t budget = std::min<std::size_t>(info.local_memory, 200u << 10);
  unsigned cap = unsigned(budget / sizeof(unsigned));
  c.passes = (slots + cap - 1) / cap;
  c.range = (slots + c.passes - 1) / c.passes;
  std::size_t replica_budget = std::size_t(tuning(info, "histogram.fast.replica_kib", 16)) << 10;
  c.replicas = std::clamp<unsigned>(unsigned(replica_budget / (c.range * sizeof(unsigned))), 1,
                                    unsigned(c.block / 32));
  c.global = c.passes > unsigned(tuning(info, "histogram.fast.max_passes", 4));
  c.shared = c.global ? 0 : std::size_t(c.range) * c.replicas * sizeof(unsigned);
  const void* k = c.global ? reinterpret_cast<const void*>(&fast_global_kernel<T, Rule>)
                           : reinterpret_cast<const void*>(&fast_shared_kernel<T, Rule>);
  if (c.shared > (48u << 10))
    PARPAT_CUDA(
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(c.shared)));
  c.blocks = blocks_for(sms, k, c.block, c.shared, n);
  return c;
}

// Adds the histogram of x[0, n) to `out` (slots counters, already zeroed or holding counts).
template <class T, class Rule>
void launch_fast(const FastConfig& c, const T* x, long long n, Rule rule, unsigned slots,
                 unsigned long long* out, cudaStream_t st) {
  if (c.global) {
    fast_global_kernel<T><<<c.blocks, c.block, 0, st>>>(x, n, rule, slots, out);
    check_launch("histogram fast_global_kernel");
    return;
  }
  for (unsigned pass = 0; pass < c.passes; ++pass) {
    unsigned first = pass * c.range;
    unsigned range = std::min(c.range, slots - first);
    fast_shared_kernel<T>
        <<<c.blocks, c.block, c.shared, st>>>(x, n, rule, first, range, c.replicas, out);
    check_launch("histogram fast_shared_kernel");
  }
}

EvenRuleDevice even_rule_device(const HistogramProblem& p) {
  EvenRule r(p);
  return EvenRuleDevice{r.bins, r.lo, r.hi, r.step, r.norm};
}

template <class T>
class CudaHistogram final : public HistogramKernel {
 public:
  CudaHistogram(const Device& d, const HistogramProblem& p, Strategy strategy)
      : device_(d), cuda_(backend_cast<CudaDevice>(d)), p_(p), strategy_(strategy) {
    cuda_.activate();
    if constexpr (sizeof(T) <= 2) {
      auto table = slot_table(p);
      aux_ = Buffer(d, table.size() * sizeof(unsigned));
      aux_.upload(table.data(), aux_.bytes());
    } else if (!p.even) {
      aux_ = Buffer(d, p.edges.size() * sizeof(double));
      aux_.upload(p.edges.data(), aux_.bytes());
    }
    block_ = tuning(d.info(), "histogram.block", 256);
    if (strategy == Strategy::privatized || strategy == Strategy::aggregated)
      shared_ = std::size_t(p.slots()) * sizeof(unsigned);
    with_rule([&](auto rule) { configure(rule); });
  }

  void run(const Buffer& in, const Buffer& counts) override {
    cuda_.activate();
    auto* out = static_cast<unsigned long long*>(counts.handle());
    PARPAT_CUDA(cudaMemsetAsync(out, 0, std::size_t(p_.slots()) * 8, cuda_.stream()));
    const T* x = static_cast<const T*>(in.handle());
    with_rule([&](auto rule) { launch(x, rule, out); });
  }

  std::size_t temp_bytes() const override { return aux_.bytes(); }

 private:
  template <class F>
  void with_rule(F f) {
    if constexpr (sizeof(T) <= 2) {
      f(TableRule{static_cast<const unsigned*>(aux_.handle())});
    } else if (p_.even) {
      f(even_rule_device(p_));
    } else {
      f(EdgesRuleDevice{static_cast<const double*>(aux_.handle()), p_.bins});
    }
  }

  template <class Rule>
  void configure(Rule) {
    const int sms = cuda_.props().multiProcessorCount;
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
        fast_ = fast_config<T, Rule>(device_.info(), sms, unsigned(p_.slots()), p_.n);
        return;
    }
    if (shared_ > (48u << 10))
      PARPAT_CUDA(
          cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_)));
    blocks_ = blocks_for(sms, k, block_, shared_, p_.n);
  }

  template <class Rule>
  void launch(const T* x, Rule rule, unsigned long long* out) {
    cudaStream_t st = cuda_.stream();
    const long long n = p_.n;
    const unsigned slots = unsigned(p_.slots());
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
        launch_fast(fast_, x, n, rule, slots, out, st);
        return;
    }
  }

  Device device_;
  CudaDevice& cuda_;
  HistogramProblem p_;
  Strategy strategy_;
  Buffer aux_;  // value → slot table (uint8/uint16) or explicit edges
  int block_ = 256, blocks_ = 1;
  std::size_t shared_ = 0;
  FastConfig fast_;
};

// Fills the value → slot table of a uint8/uint16 input on the device with the even rule itself.
__global__ void fill_table_kernel(unsigned* table, unsigned values, EvenRuleDevice rule) {
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < values) table[v] = rule.slot(double(v));
}

template <Strategy S>
std::unique_ptr<HistogramKernel> make(const Device& d, const HistogramProblem& p) {
  return visit_dtype(p.dtype, [&](auto t) -> std::unique_ptr<HistogramKernel> {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
                  std::is_same_v<T, std::int32_t> || std::is_same_v<T, float> ||
                  std::is_same_v<T, double>) {
      return std::make_unique<CudaHistogram<T>>(d, p, S);
    } else {
      throw_invalid("histogram: unsupported dtype");
    }
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
    VariantInfo v;
    v.pattern = "histogram";
    v.backend = "cuda";
    v.name = name;
    v.idea = idea;
    v.params = params;
    v.limits = limits;
    v.is_default = std::string(name) == "fast";
    return v;
  };
  return {
      {info("global-atomic", "a contiguous section per thread, one 64-bit global atomic per value",
            "block=256", ""),
       supports_any, make<Strategy::global_atomic>},
      {info("interleaved", "grid-stride (coalesced) reads, one 64-bit global atomic per value",
            "block=256", ""),
       supports_any, make<Strategy::interleaved>},
      {info("privatized",
            "a 32-bit histogram per block in shared memory, added to the 64-bit counts at the end",
            "block=256", "bins + 3 ≤ shared memory per block / 4 (about 58000 on Hopper)"),
       fits_shared, make<Strategy::privatized>},
      {info("aggregated",
            "privatized, and each thread counts a run of equal bins before one shared atomic",
            "block=256", "bins + 3 ≤ shared memory per block / 4 (about 58000 on Hopper)"),
       fits_shared, make<Strategy::aggregated>},
      {info("fast",
            "16-byte loads, shared sub-histogram per warp group, warp aggregation "
            "(ballot / __match_any_sync), passes over bin ranges beyond shared memory, global "
            "warp-aggregated atomics past histogram.fast.max_passes passes",
            "block=512 replicas<=16KiB max_passes=4",
            "temporary memory: the uint8/uint16 value table or the explicit edges only"),
       supports_any, make<Strategy::fast>},
  };
}

}  // namespace parpat::detail

namespace parpat::cuda {

std::size_t histogram_workspace_bytes(DType dtype) {
  if (dtype == DType::uint8) return 256 * sizeof(unsigned);
  if (dtype == DType::uint16) return 65536 * sizeof(unsigned);
  return 0;
}

void histogram_even(const void* d_in, DType dtype, std::int64_t n, std::int64_t bins, double lo,
                    double hi, unsigned long long* d_counts, void* d_workspace,
                    std::size_t workspace_bytes, cudaStream_t stream) {
  using namespace parpat::detail;
  if (!histogram_dtype_supported(dtype))
    throw_invalid(
        std::string("histogram takes uint8, uint16, int32, float32 or float64 input, got ") +
        dtype_name(dtype));
  if (n < 0) throw_invalid("histogram: negative number of values");
  if (bins <= 0 || bins > kMaxHistogramBins)
    throw_invalid("the number of bins must be in [1, 2^26], got " + std::to_string(bins));
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !std::isfinite(hi - lo))
    throw_invalid("the histogram range must be finite with lo < hi");
  if (workspace_bytes < histogram_workspace_bytes(dtype))
    throw_invalid("histogram workspace too small: " + std::to_string(workspace_bytes) + " < " +
                  std::to_string(histogram_workspace_bytes(dtype)) + " bytes");
  HistogramProblem p;
  p.dtype = dtype;
  p.n = n;
  p.bins = bins;
  p.lo = lo;
  p.hi = hi;
  const unsigned slots = unsigned(p.slots());
  PARPAT_CUDA(cudaMemsetAsync(d_counts, 0, std::size_t(slots) * 8, stream));
  if (n == 0) return;
  int ordinal = 0, sms = 0, shared_optin = 0;
  PARPAT_CUDA(cudaGetDevice(&ordinal));
  PARPAT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
  PARPAT_CUDA(
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  DeviceInfo info;
  info.backend = Backend::cuda;
  info.local_memory = std::uint64_t(shared_optin);
  const EvenRuleDevice even = even_rule_device(p);
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    const T* x = static_cast<const T*>(d_in);
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>) {
      auto* table = static_cast<unsigned*>(d_workspace);
      unsigned values = sizeof(T) == 1 ? 256u : 65536u;
      fill_table_kernel<<<(values + 255) / 256, 256, 0, stream>>>(table, values, even);
      check_launch("histogram fill_table_kernel");
      auto c = fast_config<T, TableRule>(info, sms, slots, n);
      launch_fast(c, x, n, TableRule{table}, slots, d_counts, stream);
    } else if constexpr (std::is_same_v<T, std::int32_t> || std::is_floating_point_v<T>) {
      auto c = fast_config<T, EvenRuleDevice>(info, sms, slots, n);
      launch_fast(c, x, n, even, slots, d_counts, stream);
    }
  });
}

}  // namespace parpat::cuda
