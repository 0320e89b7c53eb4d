// CPU reduce variants. `serial` is the reference itself. `parallel` cuts the input into
// fixed-size chunks that the thread pool takes in order; each chunk folds into eight
// independent accumulators (so the compiler can vectorise and the float sums stay pairwise
// accurate), and chunk results are combined in chunk order, so the result is deterministic.
#include <algorithm>
#include <vector>

#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/tuning.hpp"

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

constexpr int kLanes = 8;

// Folds elements [begin, end) of a contiguous run; `base` is the flattened index of p[0].
template <class Op, class T>
typename Op::Acc fold_run(const T* p, std::int64_t begin, std::int64_t end, std::int64_t base) {
  using Acc = typename Op::Acc;
  Acc lane[kLanes];
  for (auto& a : lane)
    a = Op::identity();
  std::int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      lane[j] = Op::append(lane[j], p[i + j], base + i + j);
  Acc acc = Op::identity();
  for (; i < end; ++i)
    acc = Op::append(acc, p[i], base + i);
  for (auto& a : lane)
    acc = Op::combine(acc, a);
  return acc;
}

template <class T, class Op>
class ParallelKernel final : public ReduceKernel {
  using Acc = typename Op::Acc;
  using R = typename Op::Result;

 public:
  ParallelKernel(const Device& d, const ReduceShape& s)
      : cpu_(backend_cast<CpuDevice>(d)),
        s_(s),
        chunk_(tuning(d.info(), "reduce.parallel.chunk", 1 << 16)) {
    if (s_.axis == Axis::cols) {
      row_chunks_ = std::clamp<std::int64_t>(s_.rows / 64, 1, cpu_.threads() * 4);
      partials_.resize(static_cast<std::size_t>(row_chunks_ * s_.cols));
    } else if (s_.axis == Axis::all) {
      partials_.resize(
          static_cast<std::size_t>(s_.contiguous() ? (s_.size() + chunk_ - 1) / chunk_ : s_.rows));
    }
  }

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    const T* x = static_cast<const T*>(in.handle());
    R* out = static_cast<R*>(values.handle());
    auto* idx = static_cast<std::int64_t*>(indices.handle());
    auto emit = [&](std::int64_t o, const Acc& a) {
      out[o] = Op::result(a);
      if constexpr (is_arg_pair<Acc>::value) idx[o] = a.index;
    };
    if (s_.axis == Axis::all) {
      auto tasks = static_cast<std::int64_t>(partials_.size());
      if (s_.contiguous()) {
        cpu_.parallel_for(tasks, [&](std::int64_t t) {
          std::int64_t b = t * chunk_, e = std::min(s_.size(), b + chunk_);
          partials_[t] = fold_run<Op>(x, b, e, 0);
        });
      } else {
        cpu_.parallel_for(tasks, [&](std::int64_t r) {
          partials_[r] = fold_run<Op>(x + r * s_.row_stride, 0, s_.cols, r * s_.cols);
        });
      }
      Acc acc = Op::identity();
      for (const auto& p : partials_)
        acc = Op::combine(acc, p);
      emit(0, acc);
    } else if (s_.axis == Axis::rows) {
      cpu_.parallel_for(s_.rows, [&](std::int64_t r) {
        emit(r, fold_run<Op>(x + r * s_.row_stride, 0, s_.cols, 0));
      });
    } else {
      std::int64_t per = (s_.rows + row_chunks_ - 1) / row_chunks_;
      cpu_.parallel_for(row_chunks_, [&](std::int64_t k) {
        Acc* acc = partials_.data() + k * s_.cols;
        std::fill(acc, acc + s_.cols, Op::identity());
        std::int64_t end = std::min(s_.rows, (k + 1) * per);
        for (std::int64_t r = k * per; r < end; ++r) {
          const T* row = x + r * s_.row_stride;
          for (std::int64_t c = 0; c < s_.cols; ++c)
            acc[c] = Op::append(acc[c], row[c], r);
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

 private:
  CpuDevice& cpu_;
  ReduceShape s_;
  std::int64_t chunk_;
  std::int64_t row_chunks_ = 1;
  std::vector<Acc> partials_;
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
      {info(
           "parallel",
           "all cores over fixed chunks, 8 accumulators per chunk (SIMD), chunks combined in order",
           "chunk=65536"),
       supports_everything, make_parallel},
  };
}

}  // namespace parpat::detail
