// The pairwise reference: each term and the running sum in float64, in order, so a GPU result
// is judged against the exact sum rather than against another float32 computation.
#include <cmath>

#include "pairwise/pairwise_internal.hpp"
#include "parpat/error.hpp"

namespace parpat::detail {

namespace {

double term(PairwiseKernel k, double inv_two_h2, double a, double b) {
  if (k == PairwiseKernel::product) return a * b;
  double d = a - b;
  return std::exp(-d * d * inv_two_h2);
}

void check_builtin(const PairwiseProblem& p) {
  if (p.kernel == PairwiseKernel::expression)
    throw_invalid("the pairwise reference covers only the built-in kernels product and gaussian");
}

}  // namespace

void pairwise_reference(const float* a, const float* b, const PairwiseProblem& p, double* c) {
  check_builtin(p);
  double inv_two_h2 = 1.0 / (2.0 * double(p.h) * double(p.h));
  for (std::int64_t i = 0; i < p.x; ++i) {
    double sum = 0;
    for (std::int64_t j = 0; j < p.y; ++j)
      sum += term(p.kernel, inv_two_h2, a[i], b[j]);
    c[i] = sum;
  }
}

void pairwise_magnitude(const float* a, const float* b, const PairwiseProblem& p, double* m) {
  check_builtin(p);
  double inv_two_h2 = 1.0 / (2.0 * double(p.h) * double(p.h));
  for (std::int64_t i = 0; i < p.x; ++i) {
    double sum = 0;
    for (std::int64_t j = 0; j < p.y; ++j)
      sum += std::fabs(term(p.kernel, inv_two_h2, a[i], b[j]));
    m[i] = sum;
  }
}

}  // namespace parpat::detail
