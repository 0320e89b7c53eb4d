// The calling thread's plans, so that a call in a loop builds nothing and allocates nothing: one
// Histogrammer, JointHistogrammer or Pairwise per (device, stream, dtype, shape, options).
// (Reductions, whose calls are the cheapest, keep theirs in a ReduceCall per call signature.) Plans
// are used by one thread at a time, so each thread keeps its own; a plan's workspace is reused by
// every call on its stream, which orders those calls. The cache holds at most kMaxPlans plans per
// kind and starts afresh when full.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "parpat/parpat.hpp"

namespace parpat::python {

class PlanCache {
 public:
  static constexpr std::size_t kMaxPlans = 64;

  // `weights`: the weights' dtype of a weighted plan.
  Histogrammer& histogrammer(const Device& device, DType dtype, std::int64_t n,
                             const HistogramBins& bins, const HistogramOptions& o, Stream stream,
                             std::optional<DType> weights = std::nullopt) {
    HistogramKey key{device.shared_impl().get(),
                     stream.native,
                     dtype,
                     weights ? static_cast<int>(*weights) : -1,
                     n,
                     bins.count,
                     bins.lo,
                     bins.hi,
                     bins.edges,
                     o.variant};
    return find_or_make(histogrammers_, key, [&] {
      return weights ? std::make_unique<Histogrammer>(device, dtype, *weights, n, bins, o)
                     : std::make_unique<Histogrammer>(device, dtype, n, bins, o);
    });
  }

  // `table`: one (n, D) array of samples, else D coordinate arrays; `resolved`: D bins with
  // their ranges or edges; `weights`: the weights' dtype of a weighted plan.
  JointHistogrammer& joint(const Device& device, DType dtype, std::int64_t n, bool table,
                           const std::vector<HistogramBins>& resolved, const HistogramOptions& o,
                           Stream stream, std::optional<DType> weights = std::nullopt) {
    std::vector<std::tuple<std::int64_t, double, double, std::vector<double>>> bins;
    for (const HistogramBins& b : resolved)
      bins.emplace_back(b.count, b.lo, b.hi, b.edges);
    JointKey key{device.shared_impl().get(),
                 stream.native,
                 dtype,
                 weights ? static_cast<int>(*weights) : -1,
                 n,
                 table,
                 std::move(bins),
                 o.variant};
    return find_or_make(joints_, key, [&] {
      return std::make_unique<JointHistogrammer>(device, dtype, n, table, resolved, weights, o);
    });
  }

  Pairwise& pairwise(const Device& device, std::int64_t x, std::int64_t y, const PairwiseOptions& o,
                     Stream stream) {
    PairwiseKey key{
        device.shared_impl().get(), stream.native, x, y, o.kernel, o.h, o.expression, o.variant};
    return find_or_make(pairwise_, key,
                        [&] { return std::make_unique<Pairwise>(device, x, y, o); });
  }

  void clear() {
    histogrammers_.clear();
    joints_.clear();
    pairwise_.clear();
  }

 private:
  using DeviceKey = const void*;
  using HistogramKey = std::tuple<DeviceKey, void*, DType, int, std::int64_t, std::int64_t, double,
                                  double, std::vector<double>, std::string>;
  using JointKey =
      std::tuple<DeviceKey, void*, DType, int, std::int64_t, bool,
                 std::vector<std::tuple<std::int64_t, double, double, std::vector<double>>>,
                 std::string>;
  using PairwiseKey = std::tuple<DeviceKey, void*, std::int64_t, std::int64_t, PairwiseKernel,
                                 double, std::string, std::string>;

  template <class Key, class Plan, class Make>
  Plan& find_or_make(std::map<Key, std::unique_ptr<Plan>>& plans, const Key& key, Make make) {
    auto found = plans.find(key);
    if (found != plans.end()) return *found->second;
    if (plans.size() >= kMaxPlans) plans.clear();
    return *plans.emplace(key, make()).first->second;
  }

  std::map<HistogramKey, std::unique_ptr<Histogrammer>> histogrammers_;
  std::map<JointKey, std::unique_ptr<JointHistogrammer>> joints_;
  std::map<PairwiseKey, std::unique_ptr<Pairwise>> pairwise_;
};

// The calling thread's cache.
inline PlanCache& plans() {
  thread_local PlanCache cache;
  return cache;
}

}  // namespace parpat::python
