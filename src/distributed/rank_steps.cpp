#include "distributed/rank_steps.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "distributed/agreement.hpp"
#include "parpat/error.hpp"

namespace parpat::detail {

std::string reduce_call_text(const ReduceOptions& options) {
  std::ostringstream call;
  call << "reduce " << static_cast<int>(options.op) << ' ' << static_cast<int>(options.axis) << ' '
       << options.ddof << ' ' << options.variant << " axes";
  for (int a : options.axes.value_or(std::vector<int>{-1000}))
    call << ' ' << a;
  call << (options.keepdims ? " keepdims" : "");
  return call.str();
}

std::string pairwise_call_text(const PairwiseOptions& options) {
  std::ostringstream call;
  call.precision(17);
  call << "pairwise " << static_cast<int>(options.kernel) << ' ' << options.h << ' '
       << options.expression << ' ' << options.variant << ' ' << options.brute_force << ' '
       << options.threads_per_block;
  return call.str();
}

void copy_without_padding(const float* gathered, const std::vector<std::int64_t>& lengths,
                          float* c) {
  const std::int64_t widest = *std::max_element(lengths.begin(), lengths.end());
  for (std::size_t r = 0; r < lengths.size(); ++r)
    c = std::copy_n(gathered + static_cast<std::ptrdiff_t>(r) * widest, lengths[r], c);
}

std::string histogram_call_text(const HistogramBins& bins, const HistogramOptions& options) {
  std::ostringstream call;
  call.precision(17);
  call << "histogram " << static_cast<int>(bins.kind) << ' ' << bins.count << ' ' << bins.has_range
       << ' ' << bins.lo << ' ' << bins.hi << ' ' << options.variant;
  for (double e : bins.edges)
    call << ' ' << e;
  return call.str();
}

StreamedReduce ranks_reduce_plan(const std::vector<std::int64_t>& shape,
                                 const ReduceOptions& options) {
  StreamedReduce plan = streamed_reduce(shape, {options});
  if (!plan.streams)
    throw_invalid(
        "over several ranks, reduce cannot take axes that interleave with kept ones (the "
        "reduced axes must make one block, before or after the kept ones)");
  return plan;
}

std::pair<double, double> ranks_range(Communicator& comm, bool has_data,
                                      const std::function<std::pair<double, double>()>& local) {
  struct Range {
    double lo = 0, hi = 0;
    std::uint64_t has = 0;
  } range;
  step_then_agree(comm, [&] {
    if (!has_data) return;
    auto [lo, hi] = local();
    range = {lo, hi, 1};
  });
  std::vector<Range> all(static_cast<std::size_t>(comm.size()));
  comm.all_gather(&range, sizeof range, all.data());
  std::pair<double, double> out{INFINITY, -INFINITY};
  for (const Range& r : all) {
    if (!r.has) continue;
    out.first = std::isnan(out.first) || std::isnan(r.lo) ? NAN : std::min(out.first, r.lo);
    out.second = std::isnan(out.second) || std::isnan(r.hi) ? NAN : std::max(out.second, r.hi);
  }
  return out;
}

}  // namespace parpat::detail
