// Memory and streams the caller owns: Buffer::wrap of the caller's device memory, and plans'
// run() on the caller's CUDA stream or OpenCL queue, ordered with the caller's own work there
// without a device-wide wait. Every GPU device of the build; the CPU takes no stream.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "parpat/parpat.hpp"
#include "test_support.hpp"

#ifdef PARPAT_HAVE_CUDA
#include <cuda_runtime.h>
#endif
#ifdef PARPAT_HAVE_OPENCL
#include "runtime/opencl/opencl_device.hpp"
#endif

namespace parpat::test {
namespace {

std::vector<std::int32_t> random_ints(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> d(-1000, 1000);
  std::vector<std::int32_t> v(n);
  for (auto& x : v)
    x = d(rng);
  return v;
}

// Sum and histogram of `host`, uploaded by `enqueue_upload` on the caller's stream `stream`
// into the caller's memory `handle` and computed by plans run on that same stream; `finish`
// waits for the stream alone.
void check_on_caller_stream(const Device& device, void* handle, Stream stream,
                            const std::function<void(const std::vector<std::int32_t>&)>& upload,
                            const std::function<void()>& finish) {
  const std::uint64_t seed = run_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = (1 << 20) + 7;
  auto host = random_ints(n, seed);
  Buffer wrapped = Buffer::wrap(device, handle, n * sizeof(std::int32_t));
  Array in = Array::view(wrapped, DType::int32, {static_cast<std::int64_t>(n)});
  Reducer sum(device, DType::int32, {static_cast<std::int64_t>(n)}, 0, {ReduceOp::sum});
  Buffer value(device, sizeof(std::int64_t)), none;
  HistogramBins bins = HistogramBins::even(64, -1000, 1000);
  Histogrammer hist(device, DType::int32, static_cast<std::int64_t>(n), bins);
  Buffer counts(device, static_cast<std::size_t>(hist.slots()) * sizeof(std::uint64_t));

  upload(host);  // asynchronous on the caller's stream: the plans must come after it
  sum.run(in, value, none, stream);
  hist.run(in, counts, false, stream);
  hist.run(in, counts, true, stream);  // accumulated: every count twice
  finish();

  std::int64_t got = 0;
  value.download(&got, sizeof got);
  EXPECT_EQ(got, std::accumulate(host.begin(), host.end(), std::int64_t{0}));
  std::vector<std::uint64_t> c(static_cast<std::size_t>(hist.slots()));
  counts.download(c.data(), c.size() * sizeof(std::uint64_t));
  Array on_cpu = Array::from_host(Device::open(Backend::cpu), DType::int32,
                                  {static_cast<std::int64_t>(n)}, host.data());
  HistogramResult expected = histogram(on_cpu, bins);
  for (std::size_t b = 0; b < expected.counts.size(); ++b)
    ASSERT_EQ(c[b], 2 * expected.counts[b]) << "bin " << b;
}

TEST(UserMemory, CudaStreamAndPointer) {
#ifdef PARPAT_HAVE_CUDA
  bool any = false;
  for (const auto& device : devices()) {
    if (device.backend() != Backend::cuda) continue;
    any = true;
    void* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, ((1 << 20) + 7) * sizeof(std::int32_t)), cudaSuccess);
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    std::vector<std::int32_t> pinned_copy;
    check_on_caller_stream(
        device, d, Stream{s},
        [&](const std::vector<std::int32_t>& host) {
          pinned_copy = host;  // stays alive until the stream is done
          ASSERT_EQ(cudaMemcpyAsync(d, pinned_copy.data(), host.size() * sizeof(std::int32_t),
                                    cudaMemcpyHostToDevice, s),
                    cudaSuccess);
        },
        [&] { ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess); });
    cudaStreamDestroy(s);
    cudaFree(d);
  }
  if (!any) GTEST_SKIP() << "no CUDA device";
#else
  GTEST_SKIP() << "CUDA is not built in";
#endif
}

TEST(UserMemory, OpenclQueueAndBuffer) {
#ifdef PARPAT_HAVE_OPENCL
  bool any = false;
  for (const auto& device : devices()) {
    if (device.backend() != Backend::opencl) continue;
    any = true;
    auto& cl = detail::backend_cast<detail::OpenclDevice>(device);
    cl_int status = CL_SUCCESS;
    const std::size_t bytes = ((1 << 20) + 7) * sizeof(std::int32_t);
    cl_mem mem = clCreateBuffer(cl.context()(), CL_MEM_READ_WRITE, bytes, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(cl.context()(), cl.device()(), 0, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    std::vector<std::int32_t> kept;
    check_on_caller_stream(
        device, mem, Stream{q},
        [&](const std::vector<std::int32_t>& host) {
          kept = host;
          ASSERT_EQ(
              clEnqueueWriteBuffer(q, mem, CL_FALSE, 0, bytes, kept.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
        },
        [&] { ASSERT_EQ(clFinish(q), CL_SUCCESS); });
    clReleaseCommandQueue(q);
    clReleaseMemObject(mem);
  }
  if (!any) GTEST_SKIP() << "no OpenCL device";
#else
  GTEST_SKIP() << "OpenCL is not built in";
#endif
}

TEST(UserMemory, CpuTakesNoStreamAndWrapsHostMemory) {
  Device cpu = Device::open(Backend::cpu);
  std::vector<float> host(1000, 0.25f);
  Array in = Array::view(Buffer::wrap(cpu, host.data(), host.size() * sizeof(float)),
                         DType::float32, {1000});
  Reducer sum(cpu, DType::float32, {1000}, 0, {ReduceOp::sum});
  Buffer value(cpu, sizeof(float)), none;
  int fake_stream = 0;
  EXPECT_THROW(sum.run(in, value, none, Stream{&fake_stream}), Error);
  sum.run(in, value, none);
  float got = 0;
  value.download(&got, sizeof got);
  EXPECT_EQ(got, 250.0f);
  host[7] = 1.0f;  // the view reads the caller's memory itself, no copy
  sum.run(in, value, none);
  value.download(&got, sizeof got);
  EXPECT_EQ(got, 250.75f);
  EXPECT_THROW(Array::view(Buffer::wrap(cpu, host.data(), 16), DType::float32, {1000}), Error);
  EXPECT_THROW(Buffer::wrap(cpu, nullptr, 16), Error);
}

// Strided views of the caller's memory: layouts the other constructors describe become such
// arrays, reduce reads the others in place, histogram and pairwise through a dense copy, and bad
// strides are refused where the view is made.
TEST(UserMemory, StridedViewsOfHostMemory) {
  Device cpu = Device::open(Backend::cpu);
  std::vector<float> host(64);
  std::iota(host.begin(), host.end(), 0.0f);
  const Buffer memory = Buffer::wrap(cpu, host.data(), host.size() * sizeof(float));
  const Array c_order = Array::strided_view(memory, DType::float32, {4, 1, 8}, {8, 5, 1});
  EXPECT_TRUE(c_order.contiguous());
  const Array rows = Array::strided_view(memory, DType::float32, {4, 3}, {10, 1});
  EXPECT_FALSE(rows.contiguous());
  EXPECT_EQ(rows.row_stride(), 10);
  const Array steps = Array::strided_view(memory, DType::float32, {3, 4}, {16, 2});
  EXPECT_FALSE(steps.contiguous());
  EXPECT_EQ(steps.strides(), (std::vector<std::int64_t>{16, 2}));
  EXPECT_EQ(steps.storage_elements(), 2 * 16 + 3 * 2 + 1);
  // Column sums of x[::16, ::2] read in place: column j holds 2j, 16 + 2j and 32 + 2j.
  ReduceOptions cols{ReduceOp::sum};
  cols.axes = std::vector<int>{0};
  const ReduceResult r = reduce(steps, cols);
  ASSERT_EQ(r.values.size(), 4u);
  for (int j = 0; j < 4; ++j)
    EXPECT_EQ(r.values[static_cast<std::size_t>(j)].as_double(), 48 + 6 * j) << "column " << j;
  Reducer plan(cpu, DType::float32, {3, 4}, std::vector<std::int64_t>{16, 2}, cols);
  Buffer out(cpu, 4 * sizeof(float)), none;
  EXPECT_THROW(plan.run(rows, out, none), Error);  // made for other strides
  // x[::16, ::2] holds 0, 2, 4, 6, 16, ..., 22, 32, ..., 38: 4, 4, 2 and 2 in bins 12 wide.
  EXPECT_EQ(histogram(steps, HistogramBins::even(4, 0, 48)).counts,
            (std::vector<std::uint64_t>{4, 4, 2, 2}));
  // Products of x[::2] (0, 2, ..., 14) with Σ x[:8] = 28, into a contiguous output only.
  PairwiseOptions product;
  const PairwiseResult p = pairwise(Array::strided_view(memory, DType::float32, {8}, {2}),
                                    Array::view(memory, DType::float32, {8}), product);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(p.c[static_cast<std::size_t>(i)], 2 * i * 28.0f) << "x " << i;
  Pairwise plan_of_pairs(cpu, 8, 8, product);
  EXPECT_THROW(plan_of_pairs.run(Array::view(memory, DType::float32, {8}),
                                 Array::view(memory, DType::float32, {8}),
                                 Array::strided_view(memory, DType::float32, {8}, {2})),
               Error);
  EXPECT_THROW(Array::strided_view(memory, DType::float32, {3, 4}, {-16, 2}), Error);
  EXPECT_THROW(Array::strided_view(memory, DType::float32, {3, 4}, {16}), Error);
  EXPECT_THROW(Array::strided_view(memory, DType::float32, {3, 40}, {16, 2}), Error);
}

}  // namespace
}  // namespace parpat::test
