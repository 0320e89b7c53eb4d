// OpenCL histogram `fast` beyond local memory for 4- and 8-byte input: rows sorted into buckets
// of local-memory size, then each bucket counted in local memory (histogram_bucketed.cl). Taken
// where `fast` would count globally and histogram.opencl.bucketed says so; chunks of the input
// whose 16-bit rows fit histogram.fast.bucket_chunk_mib of temporary memory.
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
  // `options`), or null where it does not apply.
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
  std::size_t group_ = 1024;
  std::uint32_t tile_values_ = 0, chunk_tiles_ = 0;
  cl_ulong target_ = 0;  // values an item of a bucket
  cl::Kernel sort_, count_;
  Buffer sorted_, meta_, totals_;  // totals_: a bucket's values in the chunk
};

}  // namespace parpat::detail
