// CPU pairwise variants. `serial` is the reference loop (float64 terms and sums) rounded to
// float32. `parallel` hands blocks of x to the thread pool; each block runs over B in tiles that
// stay in L1, with 64 x at a time (32 without AVX2) in vector lanes, and a float64 sum per tile
// so long sums keep their accuracy. The default product
// path of both is A[x]·ΣB: a reduce of B and a scale.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "pairwise/pairwise_internal.hpp"
#include "pairwise/tuning.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/cpu/simd.hpp"

namespace parpat::detail {

namespace {

class SerialKernel final : public PairwiseKernelImpl {
 public:
  explicit SerialKernel(const PairwiseProblem& p) : p_(p), c_(static_cast<std::size_t>(p.x)) {}
  void run(const Array& a, const Array& b, const Array& c) override {
    const auto* av = static_cast<const float*>(a.buffer().handle());
    const auto* bv = static_cast<const float*>(b.buffer().handle());
    auto* cv = static_cast<float*>(c.buffer().handle());
    if (p_.scaled_sum()) {
      double sum = 0;
      for (std::int64_t j = 0; j < p_.y; ++j)
        sum += bv[j];
      for (std::int64_t i = 0; i < p_.x; ++i)
        cv[i] = static_cast<float>(av[i] * sum);
      return;
    }
    pairwise_reference(av, bv, p_, c_.data());
    for (std::int64_t i = 0; i < p_.x; ++i)
      cv[i] = static_cast<float>(c_[i]);
  }

 private:
  PairwiseProblem p_;
  std::vector<double> c_;
};

// The terms in float lanes: add(acc, a, b) adds f(a, b) to acc lane by lane.
struct ProductTerm {
  template <class F>
  PARPAT_CPU_INLINE void add(F& acc, const F& a, const F& b) const {
    acc += a * b;
  }
};

// f = exp2(−((a − b)·s)²) with s = gaussian_scale(h), without a library call: x = n + f with
// n = round(x) (the 1.5·2^23 trick), a degree-5 polynomial for 2^f (2e-7 relative), and n added
// into the exponent field. Below −125 the term is 0 (x is clamped there first, so the exponent
// arithmetic stays normal).
struct GaussianTerm {
  float s;
  template <class F>
  PARPAT_CPU_INLINE void add(F& acc, const F& a, const F& b) const {
    using U = simd::Vec<std::uint32_t, sizeof(F)>;
    F lowest;
    simd::splat(lowest, -125.0f);
    const F d = (a - b) * s;
    F x = -(d * d);
    const auto underflow = x < lowest;
    x = underflow ? lowest : x;
    const F shifted = x + 12582912.0f;
    const F f = x - (shifted - 12582912.0f);
    F p;
    simd::splat(p, 0.0013266970636323094f);
    p = p * f + 0.009675459936261177f;
    p = p * f + 0.05550742521882057f;
    p = p * f + 0.24022121727466583f;
    p = p * f + 0.6931469440460205f;
    p = p * f + 1.0000001192092896f;
    U bits, n;
    std::memcpy(&bits, &p, sizeof bits);
    std::memcpy(&n, &shifted, sizeof n);
    bits += n << 23;
    std::memcpy(&p, &bits, sizeof p);
    acc += underflow ? F{} : p;
  }
};

// C for x in [begin, end), kVectors vectors of x at a time: B streams through in tiles that
// stay in L1, one broadcast B value against all lanes, float accumulators per tile and a float64
// total across tiles. Missing lanes at the end run on a copy of the last x, so the inner loop
// has a fixed width.
template <int kVectors, int kBytes, class Term>
PARPAT_CPU_INLINE void pairwise_lanes(const Term& f, const float* av, const float* bv, float* cv,
                                      std::int64_t begin, std::int64_t end, std::int64_t y,
                                      std::int64_t tile) {
  using F = simd::Vec<float, kBytes>;
  constexpr int kWidth = kBytes / 4, kLanes = kVectors * kWidth;
  for (std::int64_t i = begin; i < end; i += kLanes) {
    const std::int64_t n = std::min<std::int64_t>(kLanes, end - i);
    float a_values[kLanes];
    for (int l = 0; l < kLanes; ++l)
      a_values[l] = av[i + std::min<std::int64_t>(l, n - 1)];
    F a[kVectors];
    std::memcpy(a, a_values, sizeof a);
    double total[kLanes] = {};
    for (std::int64_t t = 0; t < y; t += tile) {
      const std::int64_t t_end = std::min(y, t + tile);
      F acc[kVectors] = {};
      for (std::int64_t j = t; j < t_end; ++j) {
        F b;
        simd::splat(b, bv[j]);
        for (int k = 0; k < kVectors; ++k)
          f.add(acc[k], a[k], b);
      }
      for (int k = 0; k < kVectors; ++k)
        for (int l = 0; l < kWidth; ++l)
          total[k * kWidth + l] += acc[k][l];
    }
    for (std::int64_t l = 0; l < n; ++l)
      cv[i + l] = static_cast<float>(total[l]);
  }
}

// Eight independent accumulator vectors: 64 lanes with AVX2, 32 in the baseline build.
template <class Term>
PARPAT_CPU_AVX2 void pairwise_lanes_avx2(const Term& f, const float* av, const float* bv, float* cv,
                                         std::int64_t begin, std::int64_t end, std::int64_t y,
                                         std::int64_t tile) {
  pairwise_lanes<8, simd::kAvx2Bytes>(f, av, bv, cv, begin, end, y, tile);
}

template <class Term>
void pairwise_lanes_baseline(const Term& f, const float* av, const float* bv, float* cv,
                             std::int64_t begin, std::int64_t end, std::int64_t y,
                             std::int64_t tile) {
  pairwise_lanes<8, simd::kBaselineBytes>(f, av, bv, cv, begin, end, y, tile);
}

template <class F>
class ParallelKernel final : public PairwiseKernelImpl {
 public:
  ParallelKernel(const Device& d, const PairwiseProblem& p, F f)
      : cpu_(backend_cast<CpuDevice>(d)),
        p_(p),
        f_(f),
        policy_(tuned<PairwiseParallelPolicy>(d.info())) {
    if (p_.scaled_sum()) sum_reducer_ = make_sum_reducer(d, p_.y);
    if (sum_reducer_) sum_ = Buffer(d, sizeof(float));
  }

  void run(const Array& a, const Array& b, const Array& c) override {
    const auto* av = static_cast<const float*>(a.buffer().handle());
    const auto* bv = static_cast<const float*>(b.buffer().handle());
    auto* cv = static_cast<float*>(c.buffer().handle());
    std::int64_t blocks = (p_.x + policy_.block - 1) / policy_.block;
    if (p_.scaled_sum()) {
      sum_reducer_->run(b, sum_, Buffer());
      float s = *static_cast<const float*>(sum_.handle());
      cpu_.parallel_for(blocks, [&](std::int64_t k) {
        std::int64_t end = std::min(p_.x, (k + 1) * policy_.block);
        for (std::int64_t i = k * policy_.block; i < end; ++i)
          cv[i] = av[i] * s;
      });
      return;
    }
    const bool avx2 = simd::cpu_has_avx2();
    cpu_.parallel_for(blocks, [&](std::int64_t k) {
      std::int64_t begin = k * policy_.block, end = std::min(p_.x, begin + policy_.block);
      if (avx2) {
        pairwise_lanes_avx2(f_, av, bv, cv, begin, end, p_.y, policy_.tile);
      } else {
        pairwise_lanes_baseline(f_, av, bv, cv, begin, end, p_.y, policy_.tile);
      }
    });
  }

 private:
  CpuDevice& cpu_;
  PairwiseProblem p_;
  F f_;
  PairwiseParallelPolicy policy_;
  std::unique_ptr<Reducer> sum_reducer_;
  Buffer sum_;
};

std::unique_ptr<PairwiseKernelImpl> make_parallel(const Device& d, const PairwiseProblem& p) {
  if (p.kernel == PairwiseKernel::gaussian)
    return std::make_unique<ParallelKernel<GaussianTerm>>(d, p, GaussianTerm{gaussian_scale(p.h)});
  return std::make_unique<ParallelKernel<ProductTerm>>(d, p, ProductTerm{});
}

}  // namespace

std::vector<PairwiseVariant> cpu_pairwise_variants() {
  auto info = [](const char* name, const char* idea, const char* params) {
    return variant_info("pairwise", Backend::cpu, name, idea, params,
                        "kernels product, gaussian (no --expr)");
  };
  return {
      {info("serial", "the reference loop: float64 terms and sums, rounded to float32", ""),
       [](const Device&, const PairwiseProblem& p) -> std::unique_ptr<PairwiseKernelImpl> {
         return std::make_unique<SerialKernel>(p);
       }},
      {info("parallel",
            "all cores over blocks of x, 64 x per step in AVX2 lanes (32 without), B in L1-sized "
            "tiles summed in float64",
            "block=256 tile=4096"),
       make_parallel},
  };
}

}  // namespace parpat::detail
