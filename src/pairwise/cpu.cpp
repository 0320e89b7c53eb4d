// CPU pairwise variants. `serial` is the reference loop (float64 terms and sums) rounded to
// float32. `parallel` hands blocks of x to the thread pool; each block runs over B in tiles that
// stay in L1, with 32 x at a time in independent float accumulators that the compiler
// vectorises, and a float64 sum per tile so long sums keep their accuracy. The default product
// path of both is A[x]·ΣB: a reduce of B and a scale.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "pairwise/pairwise_internal.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/tuning.hpp"

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

constexpr int kLanes = 32;

struct ProductTerm {
  float operator()(float a, float b) const { return a * b; }
};
// 2^x for x ≤ 0 without a library call, so the lane loop vectorises: x = n + f with
// n = round(x) (the 1.5·2^23 trick), a degree-5 polynomial for 2^f (2e-7 relative), and n added
// into the exponent field; x is clamped at −125 so the exponent stays normal.
inline float exp2_nonpositive(float x) {
  x = std::max(x, -125.0f);
  float shifted = x + 12582912.0f;
  float n = shifted - 12582912.0f;
  float f = x - n;
  float p = 0.0013266970636323094f;
  p = p * f + 0.009675459936261177f;
  p = p * f + 0.05550742521882057f;
  p = p * f + 0.24022121727466583f;
  p = p * f + 0.6931469440460205f;
  p = p * f + 1.0000001192092896f;
  std::int32_t pb, sb;
  std::memcpy(&pb, &p, 4);
  std::memcpy(&sb, &shifted, 4);
  pb += static_cast<std::int32_t>(static_cast<std::uint32_t>(sb) << 23);
  std::memcpy(&p, &pb, 4);
  return p;
}

struct GaussianTerm {
  float s;  // gaussian_scale(h): f = exp2(−((a − b)·s)²)
  float operator()(float a, float b) const {
    float d = (a - b) * s;
    return exp2_nonpositive(-d * d);
  }
};

template <class F>
class ParallelKernel final : public PairwiseKernelImpl {
 public:
  ParallelKernel(const Device& d, const PairwiseProblem& p, F f)
      : cpu_(backend_cast<CpuDevice>(d)),
        p_(p),
        f_(f),
        block_(tuning(d.info(), "pairwise.parallel.block", 256)),
        tile_(tuning(d.info(), "pairwise.parallel.tile", 4096)) {
    if (p_.scaled_sum()) sum_reducer_ = make_sum_reducer(d, p_.y);
    if (sum_reducer_) sum_ = Buffer(d, sizeof(float));
  }

  void run(const Array& a, const Array& b, const Array& c) override {
    const auto* av = static_cast<const float*>(a.buffer().handle());
    const auto* bv = static_cast<const float*>(b.buffer().handle());
    auto* cv = static_cast<float*>(c.buffer().handle());
    std::int64_t blocks = (p_.x + block_ - 1) / block_;
    if (p_.scaled_sum()) {
      sum_reducer_->run(b, sum_, Buffer());
      float s = *static_cast<const float*>(sum_.handle());
      cpu_.parallel_for(blocks, [&](std::int64_t k) {
        std::int64_t end = std::min(p_.x, (k + 1) * block_);
        for (std::int64_t i = k * block_; i < end; ++i)
          cv[i] = av[i] * s;
      });
      return;
    }
    cpu_.parallel_for(blocks, [&](std::int64_t k) {
      std::int64_t begin = k * block_, end = std::min(p_.x, begin + block_);
      for (std::int64_t i = begin; i < end; i += kLanes)
        run_lanes(av, bv, cv, i, std::min<std::int64_t>(kLanes, end - i));
    });
  }

 private:
  // C for x in [i, i + n), n ≤ kLanes: all lanes run (missing ones on a copy of A[i]) so the
  // inner loop has a fixed width.
  void run_lanes(const float* av, const float* bv, float* cv, std::int64_t i, std::int64_t n) {
    float a[kLanes];
    double total[kLanes] = {};
    for (int l = 0; l < kLanes; ++l)
      a[l] = av[i + std::min<std::int64_t>(l, n - 1)];
    for (std::int64_t t = 0; t < p_.y; t += tile_) {
      std::int64_t t_end = std::min(p_.y, t + tile_);
      float acc[kLanes] = {};
      for (std::int64_t j = t; j < t_end; ++j)
        for (int l = 0; l < kLanes; ++l)
          acc[l] += f_(a[l], bv[j]);
      for (int l = 0; l < kLanes; ++l)
        total[l] += acc[l];
    }
    for (std::int64_t l = 0; l < n; ++l)
      cv[i + l] = static_cast<float>(total[l]);
  }

  CpuDevice& cpu_;
  PairwiseProblem p_;
  F f_;
  std::int64_t block_, tile_;
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
            "all cores over blocks of x, 32 x per step in SIMD accumulators, B in L1-sized tiles "
            "summed in float64",
            "block=256 tile=4096"),
       make_parallel},
  };
}

}  // namespace parpat::detail
