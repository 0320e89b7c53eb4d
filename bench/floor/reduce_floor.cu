// reduce_floor: the floor under a short one-launch reduction on this GPU. How long a float32 sum
// takes when it only reads its input, and when it also combines its blocks, timed as `parpat
// bench` times short cases, beside CUB's DeviceReduce::Sum timed the same way in the same process.
//
// Timing: 100 launches captured into one CUDA graph, each allowed to start while the one before
// runs (programmatic dependent launch); the median of 21 replays, per launch. Unlike `parpat
// bench`, the stream is not held behind a blocking kernel while a replay is enqueued. The launches
// rotate over copies of the input that fill 4× the L2 cache (at most 64), so each one reads from
// memory as a lone call does.
//
// Each launch shape (threads per block, float4 loads per thread, hence the grid) runs two ways:
//   read only   every block sums its share and stores it. Not a reduction, but what reading the
//               input with that grid costs, which every one-launch design pays;
//   ticket      the same, then every block takes an acquire-release ticket and the last one sums
//               the partials: a whole reduction in one launch, the way parpat's `fast` finishes.
// A grid of one block is a whole reduction either way. Every shape's ticket result is checked
// against a float64 sum on the host.
//
// Build: cmake --build BUILD --target reduce_floor. Run: BUILD/bench/reduce_floor [LOG2_SIZE...]
// (default 10 16 18 20).
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/ticket.cuh"

namespace {

using parpat::detail::allow_next_launch;
using parpat::detail::prefetch_to_l2;
using parpat::detail::take_ticket;
using parpat::detail::wait_for_previous_kernel;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "reduce_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr int kMaxLoads = 16;
constexpr int kMaxBlock = 512;

// The sum of v over the block, in thread 0 (warp shuffles, then the warps' sums in one warp).
__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int d = 16; d > 0; d /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, d);
  if (blockDim.x == 32) return v;
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.f;
    for (int d = 16; d > 0; d /= 2)
      v += __shfl_xor_sync(0xffffffffu, v, d);
  }
  return v;
}

// Sums in[0, vectors) as float4s. Thread t of the grid loads vectors t, t + stride, ... (`loads`
// of them, at most kMaxLoads, all issued before the first add); the block adds its threads' sums
// and thread 0 stores the block's partial. Started early by programmatic dependent launch, the
// block first asks L2 for its lines, then waits for the kernel before it. With kTicket every
// block then takes a ticket (acquire-release, after its partial), and the block that takes the
// last one adds the partials and stores the result, leaving the counter at 0 for the next launch.
template <bool kTicket>
__global__ void __launch_bounds__(kMaxBlock)
    sum_floor(const float4* in, long long vectors, int loads, float* partials, unsigned* counter,
              float* out) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  allow_next_launch();
#pragma unroll
  for (int u = 0; u < kMaxLoads; ++u)
    if (u < loads && first + u * stride < vectors) prefetch_to_l2(in + first + u * stride);
  wait_for_previous_kernel();
  float4 x[kMaxLoads];
#pragma unroll
  for (int u = 0; u < kMaxLoads; ++u)
    if (u < loads && first + u * stride < vectors) x[u] = in[first + u * stride];
  float sum = 0.f;
#pragma unroll
  for (int u = 0; u < kMaxLoads; ++u)
    if (u < loads && first + u * stride < vectors) sum += (x[u].x + x[u].y) + (x[u].z + x[u].w);
  sum = block_sum(sum);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = sum;
    return;
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
    last = kTicket && take_ticket(counter) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  float total = 0.f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
    total += __ldcg(partials + b);
  total = block_sum(total);
  if (threadIdx.x == 0) {
    *out = total;
    *counter = 0;
  }
}

cudaStream_t stream;

// Microseconds per launch: `launch(i)` for i = 0..99 captured into one graph, the median of 21
// replays.
template <class Launch>
double graph_us(Launch launch) {
  constexpr int kLaunches = 100, kReplays = 21;
  for (int i = 0; i < 3; ++i)
    launch(i);
  check(cudaStreamSynchronize(stream), "warm-up");
  cudaGraph_t graph;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
  for (int i = 0; i < kLaunches; ++i)
    launch(i);
  check(cudaStreamEndCapture(stream, &graph), "capture");
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cudaGraphLaunch(exec, stream), "replay");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> us;
  for (int r = 0; r < kReplays; ++r) {
    check(cudaEventRecord(start, stream), "event");
    check(cudaGraphLaunch(exec, stream), "replay");
    check(cudaEventRecord(stop, stream), "event");
    check(cudaEventSynchronize(stop), "replay");
    float ms = 0.f;
    check(cudaEventElapsedTime(&ms, start, stop), "event");
    us.push_back(ms * 1000.f / kLaunches);
  }
  check(cudaEventDestroy(start), "event");
  check(cudaEventDestroy(stop), "event");
  check(cudaGraphExecDestroy(exec), "graph");
  check(cudaGraphDestroy(graph), "graph");
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct Shape {
  int block, loads, grid;
  double read_only_us, ticket_us;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> log2_sizes;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    long v = std::strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 5 || v > 28) {
      std::fprintf(stderr, "reduce_floor: sizes are log2 element counts from 5 to 28, got '%s'\n",
                   argv[i]);
      return 2;
    }
    log2_sizes.push_back(static_cast<int>(v));
  }
  if (log2_sizes.empty()) log2_sizes = {10, 16, 18, 20};

  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "device");
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::printf("reduce_floor on %s (%d SMs, L2 %d MiB)\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);

  constexpr int kMaxGrid = 65536;
  float *partials, *out;
  unsigned* counter;
  check(cudaMalloc(&partials, kMaxGrid * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&counter, sizeof(unsigned)), "cudaMalloc");
  check(cudaMalloc(&out, sizeof(float)), "cudaMalloc");
  check(cudaMemset(counter, 0, sizeof(unsigned)), "cudaMemset");

  std::printf(
      "\n| size | CUB (µs) | 0.6× CUB | read only, best (µs) | ticket, best (µs) | read only / "
      "CUB | ticket / CUB |\n|---|---:|---:|---|---|---:|---:|\n");
  std::string details;
  for (int lg : log2_sizes) {
    const long long n = 1ll << lg, vectors = n / 4;
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    const int copies = static_cast<int>(
        std::clamp<std::size_t>((4ull * prop.l2CacheSize + bytes - 1) / bytes, 1, 64));
    std::vector<float> host(static_cast<std::size_t>(n) * copies);
    for (std::size_t i = 0; i < host.size(); ++i)
      host[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f;
    double expected = 0.0;
    for (long long i = 0; i < n; ++i)
      expected += host[i];
    float* pool;
    check(cudaMalloc(&pool, bytes * copies), "cudaMalloc");
    check(cudaMemcpy(pool, host.data(), bytes * copies, cudaMemcpyHostToDevice), "upload");
    auto input = [&](int i) { return pool + static_cast<std::size_t>(i % copies) * n; };

    std::size_t temp_bytes = 0;
    check(cub::DeviceReduce::Sum(nullptr, temp_bytes, pool, out, n, stream), "CUB");
    void* temp;
    check(cudaMalloc(&temp, temp_bytes), "cudaMalloc");
    const double cub_us = graph_us([&](int i) {
      std::size_t b = temp_bytes;
      check(cub::DeviceReduce::Sum(temp, b, input(i), out, n, stream), "CUB");
    });
    check(cudaFree(temp), "cudaFree");

    std::vector<Shape> shapes;
    for (int block : {32, 64, 128, 256, kMaxBlock})
      for (int loads : {1, 2, 4, 8, 16}) {
        const long long grid = (vectors + static_cast<long long>(block) * loads - 1) /
                               (static_cast<long long>(block) * loads);
        if (grid > kMaxGrid || (block > 32 && block > vectors)) continue;
        Shape s{block, loads, static_cast<int>(grid), 0, 0};
        auto run = [&](auto kernel, int i) {
          cudaLaunchConfig_t config{};
          config.gridDim = dim3(s.grid);
          config.blockDim = dim3(s.block);
          config.stream = stream;
          cudaLaunchAttribute overlap{};
          overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
          overlap.val.programmaticStreamSerializationAllowed = 1;
          config.attrs = &overlap;
          config.numAttrs = 1;
          check(cudaLaunchKernelEx(&config, kernel, reinterpret_cast<const float4*>(input(i)),
                                   vectors, s.loads, partials, counter, out),
                "launch");
        };
        s.read_only_us = graph_us([&](int i) { run(sum_floor<false>, i); });
        s.ticket_us = graph_us([&](int i) { run(sum_floor<true>, i); });
        run(sum_floor<true>, 0);
        float got = 0.f;
        check(cudaMemcpyAsync(&got, out, sizeof got, cudaMemcpyDeviceToHost, stream), "download");
        check(cudaStreamSynchronize(stream), "download");
        if (std::fabs(got - expected) > 1e-5 * std::fabs(expected)) {
          std::fprintf(stderr, "reduce_floor: 2^%d, block %d × %d loads: sum %.9g, expected %.9g\n",
                       lg, s.block, s.loads, got, expected);
          return 1;
        }
        shapes.push_back(s);
      }
    check(cudaFree(pool), "cudaFree");

    const auto read_best = *std::min_element(shapes.begin(), shapes.end(), [](auto& a, auto& b) {
      return a.read_only_us < b.read_only_us;
    });
    const auto ticket_best = *std::min_element(
        shapes.begin(), shapes.end(), [](auto& a, auto& b) { return a.ticket_us < b.ticket_us; });
    std::printf(
        "| 2^%d | %.2f | %.2f | %.2f (%d × %d, grid %d) | %.2f (%d × %d, grid %d) | %.2f | %.2f "
        "|\n",
        lg, cub_us, 0.6 * cub_us, read_best.read_only_us, read_best.block, read_best.loads,
        read_best.grid, ticket_best.ticket_us, ticket_best.block, ticket_best.loads,
        ticket_best.grid, read_best.read_only_us / cub_us, ticket_best.ticket_us / cub_us);
    details += "\n2^" + std::to_string(lg) + ": block × loads (grid): read only / ticket µs\n";
    for (const Shape& s : shapes) {
      char line[128];
      std::snprintf(line, sizeof line, "  %3d × %2d (%5d): %6.2f / %6.2f\n", s.block, s.loads,
                    s.grid, s.read_only_us, s.ticket_us);
      details += line;
    }
  }
  std::printf("\nEvery ticket result matched the float64 sum of its input.\n%s", details.c_str());
  return 0;
}
