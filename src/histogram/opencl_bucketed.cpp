// OpenCL histogram `fast` by rows sorted into buckets (opencl_bucketed.hpp).
#include "histogram/opencl_bucketed.hpp"

#include <algorithm>

#include "histogram/tuning.hpp"

extern const char* const parpat_cl_histogram_rules;
extern const char* const parpat_cl_histogram;
extern const char* const parpat_cl_histogram_sink;
extern const char* const parpat_cl_histogram_bucketed;

namespace parpat::detail {

namespace {

constexpr std::uint32_t kMaxBuckets = 256;  // MAX_BUCKETS of histogram_bucketed.cl
constexpr std::size_t kTileLoads = 4;       // TILE_LOADS

}  // namespace

std::unique_ptr<OpenclBucketedCount> OpenclBucketedCount::make(const Device& d,
                                                               const HistogramProblem& p,
                                                               const FastLayout& layout,
                                                               const std::string& options) {
  const HistogramOpenclPolicy policy = tuned<HistogramOpenclPolicy>(d.info());
  if (!policy.bucketed || !layout.global || layout.count_values || dtype_size(p.dtype) < 4 ||
      p.n < std::int64_t{layout.counted})
    return nullptr;
  unsigned shift = 0;
  while ((1u << shift) < unsigned(policy.bucket_rows))
    ++shift;
  while (shift < 16 && (layout.counted >> shift) >= kMaxBuckets)
    ++shift;
  if ((layout.counted - 1) >> shift >= kMaxBuckets ||
      (std::uint64_t{1} << shift) * 4 > local_budget(d.info()))
    return nullptr;
  return std::unique_ptr<OpenclBucketedCount>(
      new OpenclBucketedCount(d, p, layout, options, shift));
}

OpenclBucketedCount::OpenclBucketedCount(const Device& d, const HistogramProblem& p,
                                         const FastLayout& layout, const std::string& options,
                                         unsigned shift)
    : cl_(backend_cast<OpenclDevice>(d)),
      p_(p),
      counted_(layout.counted),
      shift_(shift),
      buckets_(((layout.counted - 1) >> shift) + 1) {
  static const std::string source = std::string(parpat_cl_histogram_rules) +
                                    parpat_cl_histogram_sink + parpat_cl_histogram +
                                    parpat_cl_histogram_bucketed;
  sort_ = cl_.kernel("histogram_bucketed.cl", source, options, "bucket_rows");
  count_ = cl_.kernel("histogram_bucketed.cl", source, options, "count_buckets");
  const DeviceInfo& info = d.info();
  const HistogramFastPolicy fast = tuned<HistogramFastPolicy>(info);
  // A tile's offsets and counts are 16-bit: at most 32768 values a tile.
  const std::size_t vec = 16 / dtype_size(p.dtype);
  group_ = std::min(group_size_for(sort_, cl_, std::size_t(fast.block)),
                    group_size_for(count_, cl_, std::size_t(fast.block)));
  group_ = std::min(group_, std::size_t{32768} / (kTileLoads * vec));
  // Staging for a tile's rows within local memory.
  group_ = std::min<std::size_t>(
      group_, (local_budget(info) - kMaxBuckets * 4 - 256) / (kTileLoads * vec * 2));
  group_ = std::max<std::size_t>(group_ / 32 * 32, 32);
  tile_values_ = static_cast<std::uint32_t>(group_ * kTileLoads * vec);
  const std::int64_t tiles =
      (p.n / std::int64_t(vec) * std::int64_t(vec) + tile_values_ - 1) / tile_values_;
  const std::int64_t chunk_values = (std::int64_t{fast.bucket_chunk_mib} << 20) / 2;
  chunk_tiles_ = static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(chunk_values / tile_values_, 1, std::max<std::int64_t>(tiles, 1)));
  // Two items for each of 2 groups a compute unit, so a bucket heavier than the rest spreads.
  target_ = static_cast<cl_ulong>(std::max<std::int64_t>(
      tile_values_, std::int64_t{chunk_tiles_} * tile_values_ / (4 * info.compute_units)));
  sorted_ = Buffer(d, std::size_t{chunk_tiles_} * tile_values_ * 2);
  meta_ = Buffer(d, std::size_t{buckets_} * chunk_tiles_ * 4);
  totals_ = Buffer(d, std::size_t{buckets_} * 4);
}

void OpenclBucketedCount::run(const Buffer& in, const Buffer& counts, const ClBinRule& rule) {
  try {
    const auto vec = static_cast<std::int64_t>(16 / dtype_size(p_.dtype));
    const std::int64_t vectors = p_.n / vec, tile_vectors = tile_values_ / vec;
    const std::int64_t chunk_vectors = std::int64_t{chunk_tiles_} * tile_vectors;
    cl_uint zero = 0;
    // At least one pass, which also counts the values after the last whole vector.
    for (std::int64_t first = 0; first == 0 || first < vectors; first += chunk_vectors) {
      const std::int64_t count = std::min(chunk_vectors, vectors - first);
      const auto tiles = static_cast<cl_uint>((count + tile_vectors - 1) / tile_vectors);
      cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(totals_.handle()), true), zero, 0,
                                    totals_.bytes());
      cl_uint i = 0;
      set_args_from(sort_, i, as_mem(in.handle()), static_cast<cl_long>(p_.n),
                    static_cast<cl_long>(first), static_cast<cl_long>(count), tiles,
                    static_cast<cl_uint>(shift_), static_cast<cl_uint>(buckets_),
                    static_cast<cl_uint>(counted_));
      i = rule.bind(sort_, 8);
      set_args_from(sort_, i, as_mem(sorted_.handle()), as_mem(meta_.handle()),
                    as_mem(totals_.handle()), as_mem(counts.handle()),
                    cl::Local(std::size_t{tile_values_} * 2), cl::Local(std::size_t{buckets_} * 4));
      cl_.launch(sort_, std::max<std::size_t>(tiles, 1) * group_, group_);  // a group a tile
      if (tiles == 0) break;
      set_args_from(count_, 0, as_mem(sorted_.handle()), as_mem(meta_.handle()),
                    as_mem(totals_.handle()), tiles, tile_values_, static_cast<cl_uint>(shift_),
                    static_cast<cl_uint>(buckets_), target_, static_cast<cl_uint>(counted_),
                    cl::Local(std::size_t{4} << shift_), as_mem(counts.handle()));
      // A group an item; those past the last item return at once.
      const std::size_t most_items =
          std::size_t{buckets_} * 2 + std::size_t(count * vec / std::int64_t(target_)) + 1;
      cl_.launch(count_, most_items * group_, group_);
    }
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

}  // namespace parpat::detail
