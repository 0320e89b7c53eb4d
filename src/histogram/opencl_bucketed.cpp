// OpenCL histogram `fast` by rows sorted into buckets (opencl_bucketed.hpp).
#include "histogram/opencl_bucketed.hpp"

#include <algorithm>

#include "histogram/tuning.hpp"

extern const char* const parpat_cl_histogram_rules;
extern const char* const parpat_cl_histogram;
extern const char* const parpat_cl_histogram_sink;
extern const char* const parpat_cl_histogram_warp;
extern const char* const parpat_cl_histogram_bucketed;

namespace parpat::detail {

namespace {

constexpr std::uint32_t kMaxBuckets = 256;  // MAX_BUCKETS of histogram_bucketed.cl
constexpr std::uint32_t kTileLoads = 4;     // TILE_LOADS
constexpr std::uint32_t kBucketPad = 8;     // BUCKET_PAD
// count_buckets' own local memory: first_item, the scan's scratch (a uint a work-item at most), a
// warp's tile bases, pads.
constexpr std::uint64_t kCountStaticBytes = (kMaxBuckets + 1024 + 32 * 32 + 1) * 4;
constexpr std::uint64_t kSortStaticBytes = 64;  // bucket_rows' own: leader, one_row

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
      (std::uint64_t{1} << shift) * 4 + kCountStaticBytes > local_budget(d.info()))
    return nullptr;
  std::unique_ptr<OpenclBucketedCount> count(new OpenclBucketedCount(d, p, layout, options, shift));
  if (count->group_ == 0) return nullptr;
  return count;
}

OpenclBucketedCount::OpenclBucketedCount(const Device& d, const HistogramProblem& p,
                                         const FastLayout& layout, const std::string& options,
                                         unsigned shift)
    : cl_(backend_cast<OpenclDevice>(d)),
      p_(p),
      counted_(layout.counted),
      shift_(shift),
      buckets_(((layout.counted - 1) >> shift) + 1) {
  const DeviceInfo& info = d.info();
  const HistogramFastPolicy fast = tuned<HistogramFastPolicy>(info);
  const HistogramOpenclPolicy policy = tuned<HistogramOpenclPolicy>(info);
  const std::uint32_t vec = 16 / static_cast<std::uint32_t>(dtype_size(p.dtype));
  // Groups of whole warps, at most 1024 work-items (the scan's 32 warp sums), at least a
  // work-item a bucket; a tile's starts and counts are 16-bit (stride < 65536 rows). The kernels
  // are built for that size, so their registers fit it.
  std::size_t group = std::min({std::size_t(fast.block), std::size_t(info.max_group_size),
                                std::size_t{1024}, std::size_t{32768} / (kTileLoads * vec)});
  for (group = group / 32 * 32; group >= std::max<std::size_t>(buckets_, 32); group -= 32) {
    std::uint32_t columns = 32;
    while (columns > 4 && std::size_t{buckets_} * columns > 4 * group)
      columns /= 2;
    const auto tile_values = static_cast<std::uint32_t>(group * kTileLoads * vec);
    const std::uint32_t stride = tile_values + kBucketPad * buckets_;
    const std::uint64_t local = std::uint64_t{stride} * 2 + std::uint64_t{buckets_} * columns * 4 +
                                std::uint64_t{buckets_} * 4 + kSortStaticBytes;
    if (std::size_t{buckets_} * columns <= 4 * group && local <= local_budget(info)) {
      group_ = group;
      columns_ = columns;
      tile_values_ = tile_values;
      stride_ = stride;
      break;
    }
  }
  if (group_ == 0) return;
  static const std::string source = std::string(parpat_cl_histogram_rules) +
                                    parpat_cl_histogram_sink + parpat_cl_histogram +
                                    parpat_cl_histogram_warp + parpat_cl_histogram_bucketed;
  const bool same_vectors =
      policy.bucket_same_vectors == 2 || (policy.bucket_same_vectors == 1 && is_float(p.dtype));
  const std::string built = options + " -DBUCKET_GROUP=" + std::to_string(group_) +
                            " -DSAME_VECTORS=" + (same_vectors ? "1" : "0");
  sort_ = cl_.kernel("histogram_bucketed.cl", source, built, "bucket_rows");
  count_ = cl_.kernel("histogram_bucketed.cl", source, built, "count_buckets");
  leftovers_ = cl_.kernel("histogram_bucketed.cl", source, built, "bucket_leftovers");
  const std::int64_t whole_tiles = p.n / tile_values_;
  const std::int64_t chunk_rows = (std::int64_t{fast.bucket_chunk_mib} << 20) / 2;
  chunk_tiles_ = static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(chunk_rows / stride_, 1, std::max<std::int64_t>(whole_tiles, 1)));
  sort_groups_ = std::size_t(std::max(info.compute_units, 1) * policy.bucket_groups_per_cu);
  // Items of equal shares for uniform data, so that a bucket heavier than the rest spreads
  // over several groups; each item zeroes and adds up all its bucket's rows.
  target_ = static_cast<cl_ulong>(std::max<std::int64_t>(
      tile_values_, std::int64_t{chunk_tiles_} * tile_values_ /
                        (std::int64_t{policy.bucket_items_per_cu} * info.compute_units)));
  sorted_ = Buffer(d, std::size_t{chunk_tiles_} * stride_ * 2);
  meta_ = Buffer(d, std::size_t{buckets_} * chunk_tiles_ * 4);
  totals_ = Buffer(d, std::size_t{buckets_} * 4);
}

void OpenclBucketedCount::run(const Buffer& in, const Buffer& counts, const ClBinRule& rule) {
  try {
    const std::int64_t tile_vectors = tile_values_ / (16 / std::int64_t(dtype_size(p_.dtype)));
    const std::int64_t whole_tiles = p_.n / tile_values_;
    const cl_uint zero = 0;
    for (std::int64_t first = 0; first < whole_tiles; first += chunk_tiles_) {
      const auto tiles =
          static_cast<cl_uint>(std::min<std::int64_t>(chunk_tiles_, whole_tiles - first));
      cl_.queue().enqueueFillBuffer(cl::Buffer(as_mem(totals_.handle()), true), zero, 0,
                                    totals_.bytes());
      cl_uint i =
          set_args_from(sort_, 0, as_mem(in.handle()), static_cast<cl_long>(first * tile_vectors),
                        tiles, static_cast<cl_uint>(shift_), static_cast<cl_uint>(buckets_),
                        static_cast<cl_uint>(columns_), static_cast<cl_uint>(stride_),
                        static_cast<cl_uint>(counted_));
      i = rule.bind(sort_, i);
      set_args_from(
          sort_, i, as_mem(sorted_.handle()), as_mem(meta_.handle()), as_mem(totals_.handle()),
          as_mem(counts.handle()), cl::Local(std::size_t{stride_} * 2),
          cl::Local(std::size_t{buckets_} * columns_ * 4), cl::Local(std::size_t{buckets_} * 4));
      cl_.launch(sort_, std::min<std::size_t>(tiles, sort_groups_) * group_, group_);
      set_args_from(count_, 0, as_mem(sorted_.handle()), as_mem(meta_.handle()),
                    as_mem(totals_.handle()), tiles, static_cast<cl_uint>(stride_),
                    static_cast<cl_uint>(shift_), static_cast<cl_uint>(buckets_), target_,
                    static_cast<cl_uint>(counted_), cl::Local(std::size_t{4} << shift_),
                    as_mem(counts.handle()));
      // A group an item; those past the last item count nothing.
      const std::size_t most_items =
          std::size_t{buckets_} * 2 + std::size_t{tiles} * tile_values_ / target_ + 1;
      cl_.launch(count_, most_items * group_, group_);
    }
    const std::int64_t begin = whole_tiles * tile_values_;
    if (begin < p_.n) {
      cl_uint i = set_args_from(leftovers_, 0, as_mem(in.handle()), static_cast<cl_long>(begin),
                                static_cast<cl_long>(p_.n), static_cast<cl_uint>(counted_));
      i = rule.bind(leftovers_, i);
      set_args_from(leftovers_, i, as_mem(counts.handle()));
      const auto groups = static_cast<std::size_t>((p_.n - begin + std::int64_t(group_) - 1) /
                                                   std::int64_t(group_));
      cl_.launch(leftovers_, groups * group_, group_);
    }
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

}  // namespace parpat::detail
