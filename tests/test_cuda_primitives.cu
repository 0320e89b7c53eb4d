// The shared CUDA device primitives of src/cuda/ on their own: block folds (through the warp
// folds: shuffles, order-key reductions, bit-field sums) against host folds with numpy's rules,
// order keys (NaN above everything, −0.0 below +0.0 unless zeros tie, the key gives the value
// back), and the last-block ticket (the last block sees every partial). Skipped, with a message
// naming CUDA, where no GPU is present.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cuda/order_key.cuh"
#include "cuda/ticket.cuh"
#include "cuda/warp_reduce.cuh"
#include "reduce/reduce_ops.hpp"

namespace parpat::test {
namespace {

using namespace parpat::detail;

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define SKIP_WITHOUT_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "backend cuda has no device here"

template <class T>
std::vector<T> to_host(const T* device, std::size_t n) {
  std::vector<T> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

template <class T>
T* to_device(const std::vector<T>& host) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, host.size() * sizeof(T) + 1), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return p;
}

// Each thread folds elements tid, tid + blockDim, ... in index order; block_reduce combines.
template <class Op, class T>
__global__ void block_fold(const T* in, int n, typename Op::Acc* out) {
  typename Op::Acc v = Op::identity();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    v = Op::append(v, in[i], i);
  v = block_reduce<Op>(v);
  if (threadIdx.x == 0) *out = v;
}

template <class Op, class T>
typename Op::Acc fold_on_gpu(const std::vector<T>& host, int block) {
  T* in = to_device(host);
  typename Op::Acc* out = nullptr;
  EXPECT_EQ(cudaMalloc(&out, sizeof *out), cudaSuccess);
  block_fold<Op, T><<<1, block>>>(in, static_cast<int>(host.size()), out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  typename Op::Acc result = to_host(out, 1)[0];
  cudaFree(in);
  cudaFree(out);
  return result;
}

constexpr int kBlocks[] = {32, 96, 256, 1024};

TEST(CudaPrimitives, BlockSumsWrapAndMatchTheHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(12345);
  for (int block : kBlocks) {
    std::vector<std::int64_t> big(5003);
    std::uint64_t expected = 0;
    for (auto& v : big) {
      v = static_cast<std::int64_t>(rng());
      expected += static_cast<std::uint64_t>(v);  // wraps modulo 2^64, as numpy's int64 sum
    }
    EXPECT_EQ(fold_on_gpu<SumOp<std::int64_t>>(big, block), expected) << "block " << block;
    std::vector<std::uint8_t> bytes(4099);
    std::uint64_t byte_sum = 0;
    for (auto& v : bytes)
      byte_sum += v = static_cast<std::uint8_t>(rng());
    EXPECT_EQ(fold_on_gpu<SumOp<std::uint8_t>>(bytes, block), byte_sum) << "block " << block;
  }
}

TEST(CudaPrimitives, BlockMinMaxTakeNaNAndIntegerExtremes) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  for (int block : kBlocks) {
    std::vector<float> x(3001);
    for (auto& v : x)
      v = u(rng);
    float lo = x[0], hi = x[0];
    for (float v : x)
      lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_EQ(fold_on_gpu<MinOp<float>>(x, block), lo) << "block " << block;
    EXPECT_EQ(fold_on_gpu<MaxOp<float>>(x, block), hi) << "block " << block;
    x[1777] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(fold_on_gpu<MinOp<float>>(x, block))) << "block " << block;
    EXPECT_TRUE(std::isnan(fold_on_gpu<MaxOp<float>>(x, block))) << "block " << block;
    std::vector<std::int32_t> ints(2000, 5);
    ints[1999] = std::numeric_limits<std::int32_t>::min();
    ints[3] = std::numeric_limits<std::int32_t>::max();
    EXPECT_EQ(fold_on_gpu<MinOp<std::int32_t>>(ints, block), ints[1999]);
    EXPECT_EQ(fold_on_gpu<MaxOp<std::int32_t>>(ints, block), ints[3]);
  }
}

TEST(CudaPrimitives, BlockArgOpsTakeTheFirstExtremeAndTheFirstNaN) {
  SKIP_WITHOUT_GPU();
  for (int block : kBlocks) {
    std::vector<double> x(2500);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(0.37 * static_cast<double>(i));
    x[400] = x[1900] = -2.0;  // a tie: the first index wins
    x[100] = x[2100] = 3.0;
    auto argmin = fold_on_gpu<ArgOp<double, true>>(x, block);
    auto argmax = fold_on_gpu<ArgOp<double, false>>(x, block);
    EXPECT_EQ(argmin.index, 400) << "block " << block;
    EXPECT_EQ(argmax.index, 100) << "block " << block;
    x[1500] = x[700] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ((fold_on_gpu<ArgOp<double, true>>(x, block).index), 700) << "block " << block;
    EXPECT_EQ((fold_on_gpu<ArgOp<double, false>>(x, block).index), 700) << "block " << block;
  }
}

template <bool kMin, bool kZeroTies>
__global__ void keys_of(const float* in, int n, unsigned* keys, float* back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = order_key<float, kMin, kZeroTies>(in[i]);
  back[i] = value_of_key<float, kMin>(keys[i]);
}

TEST(CudaPrimitives, OrderKeysOrderLikeTheValues) {
  SKIP_WITHOUT_GPU();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-inf,   -3.5f, -1e-38f, -0.0f, 0.0f,
                          1e-38f, 2.0f,  3e38f,   inf,   std::numeric_limits<float>::quiet_NaN()};
  const int n = static_cast<int>(x.size());
  float* in = to_device(x);
  unsigned* keys = nullptr;
  float* back = nullptr;
  ASSERT_EQ(cudaMalloc(&keys, n * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&back, n * sizeof(float)), cudaSuccess);
  keys_of<false, false><<<1, 32>>>(in, n, keys, back);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto max_keys = to_host(keys, n);
  auto values = to_host(back, n);
  for (int i = 0; i + 1 < n; ++i)
    EXPECT_LT(max_keys[i], max_keys[i + 1]) << "at " << x[i];
  EXPECT_EQ(max_keys[n - 1], ~0u);  // NaN above everything
  for (int i = 0; i + 1 < n; ++i)
    EXPECT_EQ(std::memcmp(&values[i], &x[i], sizeof(float)), 0) << "the key of " << x[i];
  EXPECT_TRUE(std::isnan(values[n - 1]));
  keys_of<true, false><<<1, 32>>>(in, n, keys, back);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto min_keys = to_host(keys, n);
  for (int i = 0; i + 2 < n; ++i)
    EXPECT_GT(min_keys[i], min_keys[i + 1]) << "at " << x[i];
  EXPECT_EQ(min_keys[n - 1], ~0u);  // NaN wins the minimum too
  keys_of<false, true><<<1, 32>>>(in, n, keys, back);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto tie_keys = to_host(keys, n);
  EXPECT_EQ(tie_keys[3], tie_keys[4]);  // −0.0 and +0.0 tie for arg ops
  cudaFree(in);
  cudaFree(keys);
  cudaFree(back);
}

// Every block writes its partial, then takes a ticket; the block that takes the last one sums
// all partials, which the ticket's acquire must make visible.
__global__ void ticket_sum(unsigned* counter, unsigned long long* partials,
                           unsigned long long* total) {
  if (threadIdx.x != 0) return;
  partials[blockIdx.x] = blockIdx.x + 1;
  if (take_ticket(counter) != gridDim.x - 1) return;
  unsigned long long sum = 0;
  for (unsigned b = 0; b < gridDim.x; ++b)
    sum += load_coherent(&partials[b]);
  *total = sum;
  *counter = 0;
}

TEST(CudaPrimitives, TheLastBlockSeesEveryPartial) {
  SKIP_WITHOUT_GPU();
  unsigned* counter = nullptr;
  unsigned long long *partials = nullptr, *total = nullptr;
  const unsigned blocks = 4096;
  ASSERT_EQ(cudaMalloc(&counter, sizeof *counter), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&partials, blocks * sizeof *partials), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&total, sizeof *total), cudaSuccess);
  ASSERT_EQ(cudaMemset(counter, 0, sizeof *counter), cudaSuccess);
  for (int run = 0; run < 20; ++run) {
    ASSERT_EQ(cudaMemset(partials, 0, blocks * sizeof *partials), cudaSuccess);
    ASSERT_EQ(cudaMemset(total, 0, sizeof *total), cudaSuccess);
    ticket_sum<<<blocks, 32>>>(counter, partials, total);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(to_host(total, 1)[0], 1ull * blocks * (blocks + 1) / 2) << "run " << run;
    EXPECT_EQ(to_host(counter, 1)[0], 0u) << "the last block resets the counter";
  }
  cudaFree(counter);
  cudaFree(partials);
  cudaFree(total);
}

}  // namespace
}  // namespace parpat::test
