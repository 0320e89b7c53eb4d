// OpenCL histogram `fast` beyond local memory for 4- and 8-byte input: rows sorted into buckets
// of local-memory size, then each bucket counted in local memory (histogram_bucketed.cl). Taken
// where `fast` would count globally and histogram.opencl.bucketed says so; chunks of the input's
// whole tiles whose 16-bit rows fit histogram.fast.bucket_chunk_mib of temporary memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "histogram/opencl_layout.hpp"
#include "histogram/opencl_rule.hpp"

namespace parpat::detail {

class OpenclBucketedCount {
 public:
  // The bucketed count of problem p (laid out as `layout`, built with the rule's and fast's
  // `options`), or null where it does not apply or its groups do not fit the device.
  static std::unique_ptr<OpenclBucketedCount> make(const Device& d, const HistogramProblem& p,
                                                   const FastLayout& layout,
                                                   const std::string& options);
  // Adds the histogram of `in` to `counts` (placed by `rule`).
  void run(const Buffer& in, const Buffer& counts, const ClBinRule& rule);
  std::size_t temp_bytes() const { return sorted_.bytes() + meta_.bytes() + totals_.bytes(); }

 private:
  OpenclBucketedCount(const Device& d, const HistogramProblem& p, const FastLayout& layout,
                      const std::string& options, unsigned shift);

  OpenclDevice& cl_;
  HistogramProblem p_;
  std::uint32_t counted_ = 0, shift_ = 0, buckets_ = 0;
  std::size_t group_ = 0;          // work-items of every group; 0: the groups do not fit
  std::uint32_t columns_ = 0;      // the sort's counters a bucket
  std::uint32_t tile_values_ = 0;  // values a tile (a group's TILE_LOADS vectors a work-item)
  std::uint32_t stride_ = 0;       // rows a tile takes in `sorted_` (its values and the pads)
  std::uint32_t chunk_tiles_ = 0;  // whole tiles sorted and counted at once
  std::size_t sort_groups_ = 0;    // groups taking tiles in turn
  cl_ulong target_ = 0;            // values an item of a bucket
  cl::Kernel sort_, count_, leftovers_;
  Buffer sorted_, meta_, totals_;  // totals_: a bucket's values in the chunk
};

}  // namespace parpat::detail
