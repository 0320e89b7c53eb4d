// The host's choice of a barrier policy: the tuned knobs of `flip` and `hierarchical` for a grid
// (arrivals per sub-word, warp arrivals, table shape, poll delays), the zeroed workspace they
// need, and the dispatch from a method to the policy types it may launch.
#pragma once

#include <algorithm>
#include "barrier/cuda/classic_methods.cuh"
#include "barrier/cuda/hierarchical.cuh"
#include "barrier/cuda/launch.cuh"
#include "barrier/tuning.hpp"
#include "parpat/array.hpp"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

// How many of `arrivals` share one flip sub-word: all of them (one level) up to
// `one_level_max`, where one word's serialised atomics still cost less than a second level's
// round trip; above it about √arrivals, which balances the atomics per sub-word against the
// arrivals at the top word (a tuned `subword_blocks` overrides it).
unsigned int arrivals_per_subword(const BarrierFlipPolicy& flip, int arrivals) {
  if (arrivals <= flip.one_level_max) return static_cast<unsigned int>(arrivals);
  int per = flip.subword_blocks;
  if (per <= 0) {
    per = 1;
    while (per * per < arrivals)
      ++per;
  }
  return static_cast<unsigned int>(per);
}

// The arrivals at a flip barrier of `groups` blocks of `group_size`: one per block, or one per
// warp for blocks up to `warp_arrivals_block_max` threads.
bool warp_arrivals(const BarrierFlipPolicy& flip, int group_size) {
  return group_size <= flip.warp_arrivals_block_max;
}

int flip_arrivals(const BarrierFlipPolicy& flip, int groups, int group_size) {
  return warp_arrivals(flip, group_size) ? groups * ((group_size + 31) / 32) : groups;
}

// The knobs of `flip` and `hierarchical` (`clustered`) for `groups` blocks of `group_size`
// threads, from the policy (barrier/tuning.hpp says what each field means; its limits refuse
// any value out of a field's range, so none is clamped here).
Knobs read_knobs(const DeviceInfo& info, const BarrierFlipPolicy& flip, int groups, int group_size,
                 bool clustered) {
  Knobs k = {};
  int arrivals = flip_arrivals(flip, groups, group_size);
  k.relaxed_poll = flip.poll != 0 ? 1 : 0;
  unsigned int every = 1;
  while (every < static_cast<unsigned int>(flip.poll_check_every))
    every *= 2;
  k.check_mask = every - 1;
  if (!clustered && arrivals >= flip.table_from && arrivals <= flip.table_max) {
    int rows = 1;
    if (arrivals >= flip.table_rows_from)
      rows = std::min(std::max(arrivals / flip.arrivals_per_row, 2), flip.table_rows_max);
    int columns = std::max(std::min(arrivals / flip.arrivals_per_column, flip.table_columns_max),
                           flip.table_columns);
    // A lane per row and per column in the fewest lanes of a warp that arrives or polls, and
    // no row without members.
    int lanes = group_size % 32 != 0 ? group_size % 32 : 32;
    k.arrivals_per_subword = static_cast<unsigned int>(arrivals);
    k.rows = static_cast<unsigned int>(std::min({rows, arrivals, lanes}));
    k.columns = static_cast<unsigned int>(std::min(columns, lanes));
    k.table_stride = static_cast<unsigned int>(flip.table_stride_lines);
    k.poll_delay = static_cast<unsigned int>(flip.table_poll_delay);
    return k;
  }
  k.arrivals_per_subword = arrivals_per_subword(flip, arrivals);
  if (clustered) arrivals = groups / cluster_size(info, groups);
  bool release_lines = !clustered && arrivals >= flip.release_lines_from;
  k.release_lines = release_lines ? static_cast<unsigned int>(flip.release_lines) : 0;
  bool delayed = !release_lines && arrivals >= flip.poll_delay_from;
  k.poll_delay = delayed ? static_cast<unsigned int>(flip.poll_delay_cycles) : 0;
  k.atom_arrive = release_lines || (!delayed && arrivals > flip.red_arrivals_max) ? 1 : 0;
  k.sleep_ns = arrivals >= flip.poll_sleep_from ? static_cast<unsigned int>(flip.poll_sleep_ns) : 0;
  return k;
}

// The sub-words a flip barrier of these knobs uses.
int subword_count(const BarrierFlipPolicy& flip, const Knobs& k, int groups, int group_size) {
  int arrivals = flip_arrivals(flip, groups, group_size);
  int per = static_cast<int>(k.arrivals_per_subword);
  return per >= arrivals ? 0 : (arrivals + per - 1) / per;
}

// A zeroed workspace for `groups` blocks of `group_size`, with the knobs of this launch.
struct Workspace {
  Knobs knobs;
  Buffer buffer;
  Workspace(const Device& device, int groups, int group_size, bool clustered)
      : Workspace(device, tuned<BarrierFlipPolicy>(device.info()), groups, group_size, clustered) {}
  Workspace(const Device& device, const BarrierFlipPolicy& flip, int groups, int group_size,
            bool clustered)
      : knobs(read_knobs(device.info(), flip, groups, group_size, clustered)),
        buffer(device,
               workspace_words(groups, knobs, subword_count(flip, knobs, groups, group_size)) *
                   sizeof(unsigned int)) {}
  Words words() const { return Words{static_cast<unsigned int*>(buffer.handle()), knobs}; }
  void clear(CudaDevice& cuda) const {
    PARPAT_CUDA(cudaMemsetAsync(buffer.handle(), 0, buffer.bytes(), cuda.stream()));
  }
  bool failed() const {
    unsigned int error = 0;
    buffer.download(&error, sizeof error, sizeof(unsigned int));
    return error != 0;
  }
};

template <class P>
struct PolicyTag {
  using type = P;
};

// Calls f(PolicyTag<P>) for every policy P that method M may launch (flip and hierarchical
// have one per mode), so that the safe grid holds whatever the tuning picks.
template <Method M, class F>
void for_each_policy(F&& f) {
  if constexpr (M == Method::atomic_all) {
    f(PolicyTag<AtomicAllBarrier>{});
  } else if constexpr (M == Method::representative) {
    f(PolicyTag<RepresentativeBarrier>{});
  } else if constexpr (M == Method::flags) {
    f(PolicyTag<FlagsBarrier>{});
  } else if constexpr (M == Method::flip) {
    f(PolicyTag<FlipBarrier<FlipMode::block>>{});
    f(PolicyTag<FlipBarrier<FlipMode::block_warp_wait>>{});
    f(PolicyTag<FlipBarrier<FlipMode::warp>>{});
  } else if constexpr (M == Method::hierarchical) {
    f(PolicyTag<HierarchicalBarrier<false>>{});
    f(PolicyTag<HierarchicalBarrier<true>>{});
  } else {
    f(PolicyTag<CgBarrier>{});
  }
}

// Calls f(PolicyTag<P>) for the policy of method M that the tuning picks for groups of
// `group_size`.
template <Method M, class F>
void with_policy(const DeviceInfo& info, int group_size, F&& f) {
  if constexpr (M == Method::flip) {
    const BarrierFlipPolicy flip = tuned<BarrierFlipPolicy>(info);
    if (warp_arrivals(flip, group_size))
      f(PolicyTag<FlipBarrier<FlipMode::warp>>{});
    else if (flip.wait != 0)
      f(PolicyTag<FlipBarrier<FlipMode::block_warp_wait>>{});
    else
      f(PolicyTag<FlipBarrier<FlipMode::block>>{});
  } else if constexpr (M == Method::hierarchical) {
    if (tuned<BarrierHierarchicalPolicy>(info).release != 0)
      f(PolicyTag<HierarchicalBarrier<true>>{});
    else
      f(PolicyTag<HierarchicalBarrier<false>>{});
  } else {
    for_each_policy<M>(f);
  }
}

}  // namespace
}  // namespace parpat::detail
