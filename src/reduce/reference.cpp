// The reduce reference: one output at a time, elements in flattened order, accumulating in
// float64 (compensated) or 64-bit integers. Every other variant is checked against this. The
// 16-bit floats are read as float (exact) and their float results rounded once at the end.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"

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

// Neumaier's compensated sum of doubles (infinities pass through uncompensated).
class CompensatedSum {
 public:
  void add(double x) {
    double t = sum_ + x;
    if (std::isfinite(t))
      compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0, compensation_ = 0;
};

// Folds the elements of one output, visited in order, with their indices within the output.
template <class T, class R>
class Fold {
 public:
  explicit Fold(ReduceOp op) : op_(op) {}

  void add(T v, std::int64_t index) {
    switch (op_) {
      case ReduceOp::sum:
        if constexpr (std::is_floating_point_v<T>) {
          // Compensated: the reference must be more accurate than any variant it judges.
          sum_.add(static_cast<double>(v));
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
          return static_cast<R>(sum_.value());
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
  CompensatedSum sum_;
  double product_ = 1;
  std::uint64_t wrapped_ = 0, wrapped_product_ = 1;
  T best_{};
  std::int64_t best_index_ = 0;
};

// mean, var or std of the elements element(0 .. extent) (those not NaN for the nan forms) in
// two passes: a compensated mean, then the compensated sum of squared deviations from it.
template <class T, class Element>
void reference_moments(const ReduceShape& s, std::int64_t extent, const Element& element,
                       void* values, std::int64_t o) {
  const bool skip = is_nan_reduce_op(s.op);
  CompensatedSum sum;
  double n = 0;
  for (std::int64_t k = 0; k < extent; ++k)
    if (!(skip && is_nan(element(k)))) {
      sum.add(static_cast<double>(element(k)));
      ++n;
    }
  const double mean = sum.value() / n;
  CompensatedSum squares;
  for (std::int64_t k = 0; k < extent; ++k)
    if (!(skip && is_nan(element(k)))) {
      double d = static_cast<double>(element(k)) - mean;
      squares.add(d * d);
    }
  if (s.raw_moments) {
    static_cast<Moments*>(values)[o] = {n, n > 0 ? mean : 0.0, 0, squares.value()};
    return;
  }
  double value = mean;
  if (*statistic_of(s.op) != Statistic::mean) {
    double dof = n - s.ddof;
    if (n == 0 || (skip && dof <= 0))
      value = std::numeric_limits<double>::quiet_NaN();
    else
      value = squares.value() / std::max(dof, 0.0);
    if (*statistic_of(s.op) == Statistic::std) value = std::sqrt(value);
  }
  visit_dtype(reduce_result_dtype(s.dtype, s.op), [&](auto r) {
    using R = decltype(r);
    if constexpr (is_float_type<R>) static_cast<R*>(values)[o] = static_cast<R>(value);
  });
}

// One output of any other op: the basic op's Fold over the elements it takes.
template <class T, class R, class Element>
void reference_output(const ReduceShape& s, std::int64_t extent, const Element& element, R* values,
                      std::int64_t* indices, std::int64_t o) {
  if (s.op == ReduceOp::count_nonzero || s.op == ReduceOp::any || s.op == ReduceOp::all) {
    std::int64_t count = 0;
    for (std::int64_t k = 0; k < extent; ++k)
      count += element(k) != T(0);
    if (s.op == ReduceOp::count_nonzero)
      values[o] = static_cast<R>(count);
    else
      values[o] = static_cast<R>(s.op == ReduceOp::any ? count > 0 : count == extent);
    return;
  }
  const bool skip = is_nan_reduce_op(s.op);
  Fold<T, R> fold(plain_reduce_op(s.op));
  bool any = false;
  for (std::int64_t k = 0; k < extent; ++k)
    if (!(skip && is_nan(element(k)))) {
      fold.add(element(k), k);
      any = true;
    }
  values[o] = fold.value();
  if (indices) indices[o] = fold.index();
  if (!any && skip) {  // every element NaN: nanmin/nanmax give NaN, the nan arg ops no index
    if constexpr (is_float_type<R>)
      if (s.op == ReduceOp::nanmin || s.op == ReduceOp::nanmax)
        values[o] = static_cast<R>(std::numeric_limits<double>::quiet_NaN());
    if (indices) indices[o] = std::numeric_limits<std::int64_t>::max();
  }
}

// The elements are stored as S and folded as T (float for the 16-bit floats, else S itself).
template <class S, class T, class R>
void reference_typed(const S* in, const ReduceShape& s, void* values, std::int64_t* indices) {
  auto at = [&](std::int64_t r, std::int64_t c) {
    return static_cast<T>(in[r * s.row_stride + c]);
  };
  const std::int64_t extent = s.extent();
  for (std::int64_t o = 0; o < s.outputs(); ++o) {
    // Element k of output o; k is also its index within the output.
    auto element = [&](std::int64_t k) {
      if (s.axis == Axis::rows) return at(o, k);
      if (s.axis == Axis::cols) return at(k, o);
      return at(k / s.cols, k % s.cols);
    };
    if (statistic_of(s.op))
      reference_moments<T>(s, extent, element, values, o);
    else
      reference_output<T, R>(s, extent, element, static_cast<R*>(values), indices, o);
  }
}

}  // namespace

void reduce_reference(const void* in, const ReduceShape& shape, void* values,
                      std::int64_t* indices) {
  DType out = reduce_result_dtype(shape.dtype, shape.op);
  visit_dtype(shape.dtype, [&](auto t) {
    using S = decltype(t);
    using T = std::conditional_t<is_float16_type<S>, float, S>;
    visit_dtype(out, [&](auto r) {
      using R = decltype(r);
      // Integer ops on floats (count_nonzero) and float statistics of integers pair across
      // kinds; the other mixed pairs never occur.
      reference_typed<S, T, R>(static_cast<const S*>(in), shape, values,
                               is_arg_op(shape.op) ? indices : nullptr);
    });
  });
}

}  // namespace parpat::detail
