// The reduce contract as a check, shared by the tests and `parpat bench`: integers and
// min/max/arg values exactly (NaN matches NaN), float sums within 1e-6·log2(n) relative to the
// float64 reference (DESIGN.md §2), float products within 1e-5 relative; mean, var and std
// (float64 accumulators against the reference's two compensated passes) as sums. For data of
// mixed sign, pass `magnitude` = Σ|x|: the error is then measured against it (divided by n for
// a mean), as cancellation in the exact sum says nothing about the summation's accuracy. A
// float16 or bfloat16 sum, product or statistic is one rounding of a wide accumulation, so it may
// land on either side of a rounding boundary: the reference's 16-bit value or a neighbour of it
// (or, for a sum that cancels, within the float tolerance against Σ|x|).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "parpat/reduce.hpp"

namespace parpat::detail {

// Empty when `got` satisfies the contract against `expected`, else a sentence saying why.
inline std::string reduce_mismatch(const Scalar& expected, const Scalar& got, ReduceOp op,
                                   std::int64_t extent, double magnitude = 0) {
  if (expected.dtype != got.dtype) return "dtype differs";
  if (!is_float(got.dtype)) {
    bool same = is_signed_integer(got.dtype) ? expected.i == got.i : expected.u == got.u;
    return same ? "" : "expected " + expected.to_string() + ", got " + got.to_string();
  }
  double e = expected.f, g = got.f;
  if (std::isnan(e) || std::isnan(g))
    return std::isnan(e) && std::isnan(g)
               ? ""
               : "expected " + expected.to_string() + ", got " + got.to_string();
  const bool mean = op == ReduceOp::mean || op == ReduceOp::nanmean;
  const bool sum_like = op == ReduceOp::sum || op == ReduceOp::nansum || mean ||
                        op == ReduceOp::var || op == ReduceOp::std || op == ReduceOp::nanvar ||
                        op == ReduceOp::nanstd;
  const bool product = op == ReduceOp::prod || op == ReduceOp::nanprod;
  double tol =
      sum_like
          ? 1e-6 * std::max(1.0, std::log2(static_cast<double>(std::max<std::int64_t>(extent, 2))))
          : 1e-5;
  // Float64 results of a float64 reference are held to float64's own scale.
  if (got.dtype == DType::float64 && sum_like) tol *= 1e-6;
  if (mean) magnitude /= static_cast<double>(std::max<std::int64_t>(extent, 1));
  double err = std::fabs(g - e);
  if ((got.dtype == DType::float16 || got.dtype == DType::bfloat16) && (sum_like || product)) {
    // Positions on the 16-bit number line: the bits' magnitude, negated for a set sign.
    auto position = [&](double v) {
      const int bits = got.dtype == DType::float16 ? float16(v).bits : bfloat16(v).bits;
      return bits & 0x8000 ? -(bits & 0x7fff) : bits;
    };
    // Where the exact sum cancels far below Σ|x| (a subnormal left of values that cancel), the
    // wide accumulation is held to the float tolerance against Σ|x|, as wider results are.
    return std::abs(position(e) - position(g)) <= 1 || (sum_like && err <= tol * magnitude)
               ? ""
               : "expected " + expected.to_string() + ", got " + got.to_string() +
                     " (more than one 16-bit step apart)";
  }
  if (std::isinf(e) || std::isinf(g) || (!sum_like && !product))
    return e == g ? "" : "expected " + expected.to_string() + ", got " + got.to_string();
  double scale = std::max(std::fabs(e), magnitude);
  if (err <= tol * scale || err <= 1e-30) return "";
  return "expected " + expected.to_string() + ", got " + got.to_string() + " (relative error " +
         std::to_string(scale > 0 ? err / scale : err) + ")";
}

}  // namespace parpat::detail
