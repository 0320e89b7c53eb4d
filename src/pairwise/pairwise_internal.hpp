// What the pairwise dispatch and its backends share: the problem description, the kernel
// interface each variant implements, the per-backend variant tables and the reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parpat/error.hpp"
#include "parpat/pairwise.hpp"
#include "parpat/reduce.hpp"
#include "parpat/registry.hpp"
#include "runtime/variant_tables.hpp"

namespace parpat::detail {

struct PairwiseProblem {
  std::int64_t x = 0, y = 0;  // x ≥ 1, y ≥ 1: the dispatch handles empty extents itself
  PairwiseKernel kernel = PairwiseKernel::product;
  float h = 1.0f;
  std::string expression;
  bool brute_force = false;
  int threads_per_block = 0;  // 0: tuned

  // Whether the product shortcut A[x]·ΣB applies.
  bool scaled_sum() const { return kernel == PairwiseKernel::product && !brute_force; }
};

// One variant bound to one problem on one device; construction compiles and sizes workspaces.
class PairwiseKernelImpl {
 public:
  virtual ~PairwiseKernelImpl() = default;
  virtual void run(const Array& a, const Array& b, const Array& c) = 0;
  virtual std::string program_binary() const { return {}; }
  virtual int threads_per_block() const { return 0; }
};

struct PairwiseVariant {
  VariantInfo info;
  std::unique_ptr<PairwiseKernelImpl> (*make)(const Device& device, const PairwiseProblem& p);
};

std::vector<PairwiseVariant> cpu_pairwise_variants();
std::vector<PairwiseVariant> cuda_pairwise_variants();
std::vector<PairwiseVariant> opencl_pairwise_variants();

// The variant `name` of `backend` (empty: its default), or Error(invalid_argument) naming the
// ones that exist.
const PairwiseVariant& find_pairwise_variant(Backend backend, const std::string& name);

// The sum of B through the library's reduce when `device`'s backend has a reduce variant; null
// otherwise, and the caller sums B with its own kernel.
std::unique_ptr<Reducer> make_sum_reducer(const Device& device, std::int64_t y);

// The CPU reference: every term and the sum in float64, written for clarity. Only the built-in
// kernels (an expression needs a GPU compiler; tests give its float64 form themselves).
void pairwise_reference(const float* a, const float* b, const PairwiseProblem& p, double* c);
// Σ_y |f(A[x], B[y])| in float64: the scale against which an error counts as relative, so that
// mixed-sign product sums that cancel are judged by the size of their terms.
void pairwise_magnitude(const float* a, const float* b, const PairwiseProblem& p, double* m);

// The largest relative error of `got` against `expected`, each error divided by
// max(|expected|, magnitude); the contract is ≤ 1e-4 for inputs in [−1, 1] and Y ≤ 2^16.
double pairwise_max_relative_error(const std::vector<float>& got,
                                   const std::vector<double>& expected,
                                   const std::vector<double>& magnitude);

// Gaussian constant: f = exp2(−((a − b)·s)²) with s = sqrt(log2(e) / (2h²)), so kernels scale A
// and B by s once and the inner loop is a subtract, a square and an exp2.
inline float gaussian_scale(float h) {
  return static_cast<float>(std::sqrt(1.4426950408889634 / (2.0 * double(h) * double(h))));
}

// How `fast` splits B when X alone gives fewer than 256 threads per compute unit: slices of
// kSliceQuantum values (a multiple of 4, so every slice starts 16-byte aligned), enough of them
// for about `threads_per_cu` threads per compute unit (tuning
// `pairwise.fast.split_threads_per_cu`), one per grid row, each summed into its own row of partial
// results. The rows are added in order (deterministic), by the last block of each column of blocks
// in the same launch or by a second kernel (tuning `pairwise.fast.combine_in_kernel`). One slice
// (the whole of B) otherwise.
constexpr int kSliceQuantum = 128;

struct YSlices {
  long long length;  // values of B per slice
  int count;
};

inline YSlices y_slices(long long x, long long y, int tpb, int items, int compute_units,
                        int threads_per_cu = 1024) {
  const long long blocks = (x + static_cast<long long>(tpb) * items - 1) / (tpb * items);
  const long long threads = blocks * tpb, quanta = (y + kSliceQuantum - 1) / kSliceQuantum;
  if (threads >= 256ll * compute_units || quanta <= 1) return {y > 0 ? y : 1, 1};
  const long long want = static_cast<long long>(std::max(threads_per_cu, 1)) * compute_units;
  long long count = std::max(1ll, std::min((want + threads - 1) / threads, quanta));
  const long long length = (quanta + count - 1) / count * kSliceQuantum;
  count = (y + length - 1) / length;
  return {length, static_cast<int>(count)};
}

// `items`, the x per thread of `fast` (a tuning value), or Error(invalid_argument) when the
// kernels have no such width.
inline int checked_fast_items(int items) {
  if (items != 4 && items != 8 && items != 16)
    throw_invalid("pairwise fast runs 4, 8 or 16 x per thread, not " + std::to_string(items));
  return items;
}

// A tuned block size made smaller (down to 64) while X would give fewer than four blocks per
// compute unit: small problems fill the device instead of a few SMs.
inline int block_that_fills(int tpb, long long x, int items, int compute_units) {
  auto blocks = [&](int t) { return (x + static_cast<long long>(t) * items - 1) / (t * items); };
  while (tpb > 64 && blocks(tpb) < 4ll * compute_units)
    tpb /= 2;
  return tpb;
}

}  // namespace parpat::detail
