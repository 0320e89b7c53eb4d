// The reduce reference: one output at a time, elements in flattened order, accumulating in
// float64 (compensated) or 64-bit integers. Every other variant is checked against this.
#include <cmath>
#include <cstring>
#include <limits>

#include "reduce/reduce_internal.hpp"

namespace parpat::detail {

namespace {

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Folds the elements of one output, visited in order, with their indices within the output.
template <class T, class R>
class Fold {
 public:
  explicit Fold(ReduceOp op) : op_(op) {}

  void add(T v, std::int64_t index) {
    switch (op_) {
      case ReduceOp::sum:
        if constexpr (std::is_floating_point_v<T>) {
          // Neumaier's compensated summation: the reference must be more accurate than any
          // variant it judges.
          double x = static_cast<double>(v);
          double t = sum_ + x;
          if (std::isfinite(t)) {
            compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
          }
          sum_ = t;
        } else {
          wrapped_ += static_cast<std::uint64_t>(v);
        }
        break;
      case ReduceOp::prod:
        if constexpr (std::is_floating_point_v<T>) {
          product_ *= static_cast<double>(v);
        } else {
          wrapped_product_ *= static_cast<std::uint64_t>(v);
        }
        break;
      default: {
        bool take = false;
        if (count_ == 0) {
          take = true;
        } else if (!is_nan(best_)) {
          if (is_nan(v))
            take = true;
          else if (op_ == ReduceOp::min || op_ == ReduceOp::argmin)
            take = v < best_;
          else
            take = v > best_;
        }
        if (take) {
          best_ = v;
          best_index_ = index;
        }
      }
    }
    ++count_;
  }

  R value() const {
    switch (op_) {
      case ReduceOp::sum:
        if constexpr (std::is_floating_point_v<T>) {
          double total = std::isfinite(sum_) ? sum_ + compensation_ : sum_;
          return static_cast<R>(total);
        } else {
          return static_cast<R>(wrapped_);
        }
      case ReduceOp::prod:
        if constexpr (std::is_floating_point_v<T>) {
          return static_cast<R>(product_);
        } else {
          return static_cast<R>(wrapped_product_);
        }
      default:
        return static_cast<R>(best_);
    }
  }
  std::int64_t index() const { return best_index_; }

 private:
  ReduceOp op_;
  std::int64_t count_ = 0;
  double sum_ = 0, compensation_ = 0, product_ = 1;
  std::uint64_t wrapped_ = 0, wrapped_product_ = 1;
  T best_{};
  std::int64_t best_index_ = 0;
};

template <class T, class R>
void reference_typed(const T* in, const ReduceShape& s, R* values, std::int64_t* indices) {
  auto at = [&](std::int64_t r, std::int64_t c) { return in[r * s.row_stride + c]; };
  auto finish = [&](std::int64_t o, const Fold<T, R>& fold) {
    values[o] = fold.value();
    if (indices) indices[o] = fold.index();
  };
  if (s.axis == Axis::all) {
    Fold<T, R> fold(s.op);
    for (std::int64_t r = 0; r < s.rows; ++r)
      for (std::int64_t c = 0; c < s.cols; ++c)
        fold.add(at(r, c), r * s.cols + c);
    finish(0, fold);
  } else if (s.axis == Axis::rows) {
    for (std::int64_t r = 0; r < s.rows; ++r) {
      Fold<T, R> fold(s.op);
      for (std::int64_t c = 0; c < s.cols; ++c)
        fold.add(at(r, c), c);
      finish(r, fold);
    }
  } else {
    for (std::int64_t c = 0; c < s.cols; ++c) {
      Fold<T, R> fold(s.op);
      for (std::int64_t r = 0; r < s.rows; ++r)
        fold.add(at(r, c), r);
      finish(c, fold);
    }
  }
}

}  // namespace

void reduce_reference(const void* in, const ReduceShape& shape, void* values,
                      std::int64_t* indices) {
  DType out = reduce_result_dtype(shape.dtype, shape.op);
  visit_dtype(shape.dtype, [&](auto t) {
    using T = decltype(t);
    visit_dtype(out, [&](auto r) {
      using R = decltype(r);
      if constexpr (std::is_floating_point_v<T> == std::is_floating_point_v<R>) {
        reference_typed<T, R>(static_cast<const T*>(in), shape, static_cast<R*>(values),
                              is_arg_op(shape.op) ? indices : nullptr);
      }
    });
  });
}

}  // namespace parpat::detail
