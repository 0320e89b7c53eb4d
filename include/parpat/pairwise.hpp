// parpat/pairwise.hpp — pairwise map-reduce: C[x] = Σ_y f(A[x], B[y]) over float32 vectors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parpat/array.hpp"

namespace parpat {

// f(a, b): `product` a·b, `gaussian` exp(−(a−b)²/(2h²)), `expression` a user's expression in
// `a` and `b`, compiled at run time (OpenCL program build, NVRTC on CUDA; GPU backends only).
enum class PairwiseKernel { product, gaussian, expression };

const char* pairwise_kernel_name(PairwiseKernel k);
PairwiseKernel parse_pairwise_kernel(const std::string& name);  // "product" or "gaussian"

struct PairwiseOptions {
  PairwiseKernel kernel = PairwiseKernel::product;
  double h = 1.0;          // gaussian bandwidth, > 0
  std::string expression;  // kernel == expression: e.g. "a*b + sinf(a - b)"
  std::string variant;     // empty: `fast` on GPUs, `parallel` on the CPU
  // product only: false computes A[x]·ΣB (a reduce and a scale); true runs the all-pairs
  // kernel of the variant, which is what benchmarks measure.
  bool brute_force = false;
  int threads_per_block = 0;  // 0: the variant's tuned block size
  // true: time the call with events of its own (time_ms); false (default): enqueue only the
  // pattern's work and leave time_ms 0.
  bool timed = false;
};

struct PairwiseResult {
  std::vector<float> c;  // X values
  double time_ms = 0;    // device time of the computation itself
};

// A pairwise computation bound to one device, extents X and Y and options. Construction checks
// the options, compiles what needs compiling and sizes every workspace, so run() only enqueues
// work. Throws Error(invalid_argument) for X = 0, h ≤ 0, an unknown variant, an expression on
// the CPU backend or an expression that does not compile (the message carries the build log).
class Pairwise {
 public:
  Pairwise(const Device& device, std::int64_t x, std::int64_t y, const PairwiseOptions& options);
  ~Pairwise();
  Pairwise(Pairwise&&) noexcept;
  Pairwise& operator=(Pairwise&&) noexcept;

  // Enqueues C = Σ_y f(A[x], B[y]); `a` and `c` hold X float32 values, `b` Y. Y = 0 gives
  // zeros (the sum of nothing). Asynchronous on GPU backends. Strided views `a` and `b` are read
  // through dense copies on the device; `c` must be contiguous.
  void run(const Array& a, const Array& b, const Array& c, Stream stream = {});
  // The compiled program the variant runs (PTX on CUDA and NVIDIA OpenCL, the driver's binary
  // on other OpenCL platforms); empty on the CPU.
  std::string program_binary() const;
  std::int64_t x() const;
  std::int64_t y() const;
  // The variant that runs and its threads per block (0 on the CPU).
  const std::string& variant() const;
  int threads_per_block() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot form: checks that `a` and `b` are 1-D float32 arrays on the same device, runs, and
// returns C with the device time.
PairwiseResult pairwise(const Array& a, const Array& b, const PairwiseOptions& options = {});

}  // namespace parpat
