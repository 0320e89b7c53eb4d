// CPU reduce variants. `serial` is the reference itself. `parallel` cuts the input into chunks
// whose size depends on the input's size alone (chunk_elements) and that the thread pool takes in
// order, and combines the chunk results in chunk order, so the result is deterministic. A chunk
// folds in vector lanes (simd.hpp: AVX2 where the processor has it) for sum, min, max, argmin,
// argmax, mean, var and std (and their nan forms), nanmin and nanmax of the 4- and 8-byte types,
// and in eight scalar accumulators otherwise (uint8, prod, the other nan-ops). bool's extremes,
// any and all stop at the first element that decides them.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "reduce/cpu_folds.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "reduce/tuning.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/cpu/simd.hpp"

namespace parpat::detail {

namespace {

class SerialKernel final : public ReduceKernel {
 public:
  explicit SerialKernel(const ReduceShape& s) : shape_(s) {}
  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    reduce_reference(in.handle(), shape_, values.handle(),
                     static_cast<std::int64_t*>(indices.handle()));
  }

 private:
  ReduceShape shape_;
};

// The elements of one task of `parallel` over n elements: a power of two that spreads the input
// over reduce.parallel.tasks tasks, within [reduce.parallel.min_chunk, reduce.parallel.chunk].
// Mid-sized inputs then run on several cores (a hand-out costs well under a microsecond while
// the pool's threads poll), while large ones keep chunks long enough for the lanes to stream.
std::int64_t chunk_elements(const DeviceInfo& info, std::int64_t n) {
  const ReduceParallelPolicy policy = tuned<ReduceParallelPolicy>(info);
  const std::int64_t most = policy.chunk;
  const std::int64_t least = std::min<std::int64_t>(policy.min_chunk, most);
  const std::int64_t tasks = policy.tasks;
  std::int64_t chunk = 1;
  while (chunk * tasks < n && chunk < most)
    chunk *= 2;
  return std::clamp(chunk, least, most);
}

template <class T, class Op>
class ParallelKernel final : public ReduceKernel {
  using Acc = typename Op::Acc;
  using R = typename Op::Result;

 public:
  ParallelKernel(const Device& d, const ReduceShape& s)
      : cpu_(backend_cast<CpuDevice>(d)), s_(s), chunk_(chunk_elements(d.info(), s.size())) {
    if (is_moments_op<Op>::value && !s.raw_moments)
      moments_.resize(static_cast<std::size_t>(s.outputs()));
    if (s_.axis == Axis::cols) {
      row_chunks_ = std::clamp<std::int64_t>(s_.rows / 64, 1, cpu_.threads() * 4);
      resize_partials(row_chunks_ * s_.cols);
      if constexpr (std::is_same_v<Op, SumOp<float>>)
        scratch_.resize(static_cast<std::size_t>(row_chunks_ * s_.cols));
    } else if (s_.axis == Axis::all) {
      resize_partials(s_.contiguous() ? (s_.size() + chunk_ - 1) / chunk_ : s_.rows);
    }
  }

  void resize_partials(std::int64_t count) {
    partials_ = std::make_unique<Acc[]>(static_cast<std::size_t>(count));
    partial_count_ = count;
  }

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    const T* x = static_cast<const T*>(in.handle());
    // Moment ops fold into Moments here, then write the statistic (or the Moments themselves
    // for a streamed chunk).
    const bool statistic = !moments_.empty();
    R* out = statistic ? reinterpret_cast<R*>(moments_.data()) : static_cast<R*>(values.handle());
    auto* idx = static_cast<std::int64_t*>(indices.handle());
    run_folds(x, out, idx);
    if (statistic)
      write_statistics(moments_.data(), s_.op, s_.ddof, reduce_result_dtype(s_.dtype, s_.op),
                       s_.outputs(), values.handle());
  }

 private:
  void run_folds(const T* x, R* out, std::int64_t* idx) {
    auto emit = [&](std::int64_t o, const Acc& a) {
      out[o] = Op::result(a);
      if constexpr (is_arg_pair<Acc>::value) idx[o] = a.index;
    };
    if (s_.axis == Axis::all) {
      const std::int64_t tasks = partial_count_;
      if constexpr (kBoolSearch<Op, T> != 0) {
        if (s_.contiguous() && s_.size() > 0) {
          emit(0, bool_search(reinterpret_cast<const unsigned char*>(x), tasks));
          return;
        }
      }
      if (s_.contiguous()) {
        cpu_.parallel_for(tasks, [&](std::int64_t t) {
          std::int64_t b = t * chunk_, e = std::min(s_.size(), b + chunk_);
          partials_[t] = fold<Op>(x, b, e, 0);
        });
      } else {
        cpu_.parallel_for(tasks, [&](std::int64_t r) {
          partials_[r] = fold<Op>(x + r * s_.row_stride, 0, s_.cols, r * s_.cols);
        });
      }
      Acc acc = Op::identity();
      for (std::int64_t t = 0; t < tasks; ++t)
        acc = Op::combine(acc, partials_[t]);
      emit(0, acc);
    } else if (s_.axis == Axis::rows) {
      // Tasks of whole rows, about one chunk each, so short rows do not pay a hand-out each.
      const std::int64_t per =
          std::max<std::int64_t>(1, chunk_ / std::max<std::int64_t>(1, s_.cols));
      cpu_.parallel_for((s_.rows + per - 1) / per, [&](std::int64_t t) {
        for (std::int64_t r = t * per; r < std::min(s_.rows, (t + 1) * per); ++r)
          emit(r, fold<Op>(x + r * s_.row_stride, 0, s_.cols, 0));
      });
    } else {
      std::int64_t per = (s_.rows + row_chunks_ - 1) / row_chunks_;
      cpu_.parallel_for(row_chunks_, [&](std::int64_t k) {
        Acc* acc = partials_.get() + k * s_.cols;
        float* scratch = scratch_.empty() ? nullptr : scratch_.data() + k * s_.cols;
        std::fill(acc, acc + s_.cols, Op::identity());
        std::int64_t first = std::min(s_.rows, k * per), last = std::min(s_.rows, (k + 1) * per);
        if (simd::cpu_has_avx2()) {
          fold_columns_avx2<Op>(x, s_.row_stride, first, last, s_.cols, acc, scratch);
        } else {
          fold_columns_baseline<Op>(x, s_.row_stride, first, last, s_.cols, acc, scratch);
        }
      });
      for (std::int64_t c = 0; c < s_.cols; ++c) {
        Acc acc = partials_[c];
        for (std::int64_t k = 1; k < row_chunks_; ++k)
          acc = Op::combine(acc, partials_[k * s_.cols + c]);
        emit(c, acc);
      }
    }
  }

  // The accumulator of a bool op that kBoolSearch names: the chunks are searched in order for
  // the deciding element, and a chunk after one that found it is not read.
  Acc bool_search(const unsigned char* p, std::int64_t tasks) {
    constexpr bool kTrue = kBoolSearch < Op, T >> 0;
    const std::int64_t n = s_.size();
    // Most inputs decide within their first bytes: read those before waking the threads.
    const std::int64_t head = std::min<std::int64_t>(n, 4096);
    std::int64_t hit = first_byte<kTrue>(p, 0, head);
    if (hit < head) return Op::load(kTrue, hit);
    std::atomic<std::int64_t> first{n};
    cpu_.parallel_for(tasks, [&](std::int64_t t) {
      const std::int64_t b = t * chunk_, e = std::min(n, b + chunk_);
      if (first.load(std::memory_order_relaxed) < b) return;
      const std::int64_t at = first_byte<kTrue>(p, std::max(b, head), e);
      if (at == e) return;
      std::int64_t seen = first.load(std::memory_order_relaxed);
      while (at < seen && !first.compare_exchange_weak(seen, at, std::memory_order_relaxed)) {
      }
    });
    hit = first.load();
    const bool found = hit < n;
    return Op::load(kTrue ? found : !found, found ? hit : 0);
  }

  CpuDevice& cpu_;
  ReduceShape s_;
  std::vector<Moments> moments_;
  std::int64_t chunk_;
  std::int64_t row_chunks_ = 1;
  // An array, not a vector: the accumulator of bool min and max is a bool.
  std::unique_ptr<Acc[]> partials_;
  std::int64_t partial_count_ = 0;
  std::vector<float> scratch_;  // float32 sum over cols: 16-row float partials per row chunk
};

std::unique_ptr<ReduceKernel> make_parallel(const Device& d, const ReduceShape& s) {
  return visit_dtype(s.dtype, [&](auto t) -> std::unique_ptr<ReduceKernel> {
    using T = decltype(t);
    return visit_reduce_op<T>(s.op, [&](auto op) -> std::unique_ptr<ReduceKernel> {
      return std::make_unique<ParallelKernel<T, decltype(op)>>(d, s);
    });
  });
}

bool supports_everything(const ReduceShape&, const DeviceInfo&) {
  return true;
}

}  // namespace

std::vector<ReduceVariant> cpu_reduce_variants() {
  auto info = [](const char* name, const char* idea, const char* params) {
    return variant_info("reduce", Backend::cpu, name, idea, params);
  };
  return {
      {info("serial", "the reference: one pass in order, float64 compensated / 64-bit sums", ""),
       supports_everything,
       [](const Device&, const ReduceShape& s) -> std::unique_ptr<ReduceKernel> {
         return std::make_unique<SerialKernel>(s);
       }},
      {info("parallel",
            "all cores over chunks sized by the input, vector lanes per chunk (AVX2 when "
            "present), chunks combined in order",
            "chunk=4096..65536, tasks=16"),
       supports_everything, make_parallel},
  };
}

}  // namespace parpat::detail
