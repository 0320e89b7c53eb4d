// The host's plan of a CUDA barrier launch: the layout of the public barrier (`flip`, and the
// global level of `hierarchical`) from the tuning policy, the zeroed workspace of any method,
// and the device-side barrier and handle type of each method.
#pragma once

#include <algorithm>
#include <type_traits>

#include "barrier/cuda/classic_methods.cuh"
#include "barrier/cuda/hierarchical.cuh"
#include "barrier/cuda/launch.cuh"
#include "barrier/tuning.hpp"
#include "parpat/array.hpp"

namespace parpat::detail {
// Private to barrier/cuda.cu, the one file that includes it.
namespace {

using parpat::cuda::GridArrivals;
using parpat::cuda::GridBarrierLayout;

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

// The layout of the public barrier for `groups` blocks of `group_size` threads (barrier/tuning.hpp
// says what each field of the policy means; its limits refuse any value out of a field's range,
// so none is clamped here), one arrival per block or per warp. `top_arrivals`, when positive, is
// the number of arrivals at the flip word of `hierarchical` (one per cluster), which uses no
// table.
GridBarrierLayout flip_layout(const BarrierFlipPolicy& flip, int groups, int group_size,
                              GridArrivals arrivals_of, int top_arrivals = 0) {
  GridBarrierLayout k = {};
  int arrivals = static_cast<int>(parpat::cuda::detail::arrival_count(
      static_cast<unsigned int>(groups), static_cast<unsigned int>(group_size), arrivals_of));
  unsigned int every = 1;
  while (every < static_cast<unsigned int>(flip.poll_check_every))
    every *= 2;
  k.check_mask = every - 1;
  if (top_arrivals == 0 && arrivals >= flip.table_from && arrivals <= flip.table_max) {
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
  if (top_arrivals > 0) arrivals = top_arrivals;
  bool release_lines = top_arrivals == 0 && arrivals >= flip.release_lines_from;
  k.release_lines = release_lines ? static_cast<unsigned int>(flip.release_lines) : 0;
  bool delayed = !release_lines && arrivals >= flip.poll_delay_from;
  k.poll_delay = delayed ? static_cast<unsigned int>(flip.poll_delay_cycles) : 0;
  k.atom_arrive = release_lines || (!delayed && arrivals > flip.red_arrivals_max) ? 1 : 0;
  k.sleep_ns = arrivals >= flip.poll_sleep_from ? static_cast<unsigned int>(flip.poll_sleep_ns) : 0;
  return k;
}

// Who arrives at `flip` for blocks of `group_size` (the tuned choice).
GridArrivals flip_arrivals(const BarrierFlipPolicy& flip, int group_size) {
  return group_size <= flip.warp_arrivals_block_max ? GridArrivals::warp : GridArrivals::block;
}

// A zeroed workspace for `groups` blocks of `group_size` with the layout of this launch: room
// for the classic methods' flags and for the public barrier's words.
struct Workspace {
  GridArrivals arrivals;  // the public barrier's
  GridBarrierLayout layout;
  Buffer buffer;
  Workspace(const Device& device, int groups, int group_size, bool clustered)
      : Workspace(device, tuned<BarrierFlipPolicy>(device.info()), groups, group_size, clustered) {}
  Workspace(const Device& device, const BarrierFlipPolicy& flip, int groups, int group_size,
            bool clustered)
      : arrivals(clustered ? GridArrivals::block : flip_arrivals(flip, group_size)),
        layout(flip_layout(flip, groups, group_size, arrivals,
                           clustered ? groups / cluster_size(device.info(), groups) : 0)),
        buffer(device, std::max(classic_words(groups),
                                parpat::cuda::detail::workspace_words(
                                    layout, parpat::cuda::detail::arrival_count(
                                                static_cast<unsigned int>(groups),
                                                static_cast<unsigned int>(group_size), arrivals))) *
                           sizeof(unsigned int)) {}
  unsigned int* base() const { return static_cast<unsigned int*>(buffer.handle()); }
  Words classic() const { return Words{base()}; }
  template <GridArrivals Arrivals>
  parpat::cuda::BasicGridBarrier<Arrivals> public_barrier() const {
    return {base(), layout, kTimeoutCycles};
  }
  void clear(CudaDevice& cuda) const {
    PARPAT_CUDA(cudaMemsetAsync(buffer.handle(), 0, buffer.bytes(), cuda.stream()));
  }
  bool failed() const {
    unsigned int error = 0;
    buffer.download(&error, sizeof error, sizeof(unsigned int));
    return error != 0;
  }
};

// A device-side barrier type and the handle it is made from.
template <class B, class H>
struct BarrierTag {
  using Barrier = B;
  using Handle = H;
};

using BlockFlip = BarrierTag<parpat::cuda::GridSync, parpat::cuda::GridBarrier>;
using WarpFlip = BarrierTag<parpat::cuda::WarpGridSync, parpat::cuda::WarpGridBarrier>;

// The barrier of the classic methods and cg, made from the classic workspace.
template <Method M>
using ClassicTag = BarrierTag<
    std::conditional_t<
        M == Method::atomic_all, AtomicAllBarrier,
        std::conditional_t<M == Method::representative, RepresentativeBarrier,
                           std::conditional_t<M == Method::flags, FlagsBarrier, CgBarrier>>>,
    Words>;

// Calls f(tag) for every barrier that method M may launch (`flip` has one per arrivals), so that
// the safe grid holds whichever the tuning picks.
template <Method M, class F>
void for_each_barrier(F&& f) {
  if constexpr (M == Method::flip) {
    f(BlockFlip{});
    f(WarpFlip{});
  } else if constexpr (M == Method::hierarchical) {
    f(BarrierTag<HierarchicalBarrier, parpat::cuda::GridBarrier>{});
  } else {
    f(ClassicTag<M>{});
  }
}

// Calls f(tag, handle) for the barrier of method M that `ws` is laid out for.
template <Method M, class F>
void with_barrier(const Workspace& ws, F&& f) {
  if constexpr (M == Method::flip) {
    if (ws.arrivals == GridArrivals::warp)
      f(WarpFlip{}, ws.public_barrier<GridArrivals::warp>());
    else
      f(BlockFlip{}, ws.public_barrier<GridArrivals::block>());
  } else if constexpr (M == Method::hierarchical) {
    f(BarrierTag<HierarchicalBarrier, parpat::cuda::GridBarrier>{},
      ws.public_barrier<GridArrivals::block>());
  } else {
    f(ClassicTag<M>{}, ws.classic());
  }
}

}  // namespace
}  // namespace parpat::detail
