// barrier_floor: where the time of a one-word grid barrier goes on this GPU. It times the
// primitives every grid barrier is built from, one L2 line under load, then the one-word flip
// barrier (one release reduction per block, relaxed polls, one acquire after the flip) over grids
// of 2 blocks to 8 per SM, written several ways and with parts of its memory ordering taken out,
// beside cooperative groups' grid.sync in the same process; last, the flip word at other
// addresses.
//
// The rows:
//   lean            the flip in a few instructions: red.release, a tight loop of relaxed polls,
//                   fence.acquire.gpu, __syncthreads (no bound on the spin, no failure report);
//   load acquire    the same, one ld.acquire.gpu after the flip instead of the fence;
//   acquire polls   the same, every poll an ld.acquire.gpu (cooperative groups' way);
//   as in parpat    polls in runs of 4 with a clock read between runs of 1024 (the bounded spin)
//                   and __syncthreads_and to leave (the failure report);
//   N later         the first poll N clock cycles after the arrival;
//   atom            the arrival an atomic whose answer is awaited before the first poll;
//   M x K words     the arrivals and polls spread over a table of words (table_kernel);
//   component: ...  no release and / or no acquire: not barriers (data written before them need
//                   not be visible after them), only what each ordering step costs.
//
// Timing: µs per barrier = (T(K barriers) − T(0)) / K from CUDA events around one cooperative
// launch, the median of 5 launches each. Blocks of 128 threads, thread 0 arrives and polls.
//
// Build: cmake --build BUILD --target barrier_floor. Run: BUILD/bench/barrier_floor.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "parpat/cuda/grid_barrier.cuh"

namespace {

constexpr size_t kBufferBytes = size_t(1) << 22;

namespace cg = cooperative_groups;
using parpat::cuda::detail::global_address;
using parpat::cuda::detail::load_acquire;
using parpat::cuda::detail::load_relaxed;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "barrier_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// The primitives, each timed by one thread over `n` dependent repetitions, in cycles.
enum Primitive {
  kFenceAcqRel,
  kFenceRelease,
  kFenceSc,
  kFenceAcqRelCluster,
  kFenceAcquire,
  kLoadRelaxed,
  kLoadAcquire,
  kRedRelease,
  kRedRelaxed,
  kBarSync,
  kPrimitives
};
const char* const kPrimitiveNames[kPrimitives] = {"fence.acq_rel.gpu",
                                                  "fence.release.gpu",
                                                  "fence.sc.gpu",
                                                  "fence.acq_rel.cluster",
                                                  "fence.acquire.gpu",
                                                  "ld.relaxed.gpu round trip",
                                                  "ld.acquire.gpu round trip",
                                                  "red.release.gpu back to back",
                                                  "red.relaxed.gpu back to back",
                                                  "bar.sync of 128 threads"};

__global__ void primitives_kernel(unsigned int* word, long long* cycles, int n) {
  unsigned int acc = 0;
  unsigned int* own = word + 32 * (1 + threadIdx.x);
  long long t[kPrimitives + 1];
  int p = 0;
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("fence.release.gpu;" ::: "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("fence.sc.gpu;" ::: "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("fence.acq_rel.cluster;" ::: "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("fence.acquire.gpu;" ::: "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    acc += load_relaxed(own + (acc & 1u)) & 1u;
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    acc += load_acquire(own + (acc & 1u)) & 1u;
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(global_address(own + 2))
                 : "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(global_address(own + 2))
                 : "memory");
  t[p++] = clock64();
  for (int i = 0; i < n; ++i)
    __syncthreads();
  t[p++] = clock64();
  if (threadIdx.x == 0)
    for (int p = 0; p < kPrimitives; ++p)
      cycles[p] = (t[p + 1] - t[p]) / n;
  if (acc == 12345u) word[1] = acc;
}

// One L2 line under load: thread 0 of every block issues `n` operations on one shared word
// (reductions, or relaxed loads 8 at a time), so the kernel's time over all operations is the
// line's time per operation.
__global__ void line_reds_kernel(unsigned int* word, int n) {
  if (threadIdx.x != 0) return;
  for (int i = 0; i < n; ++i)
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(global_address(word)) : "memory");
}

__global__ void line_loads_kernel(unsigned int* word, int n) {
  if (threadIdx.x != 0) return;
  unsigned int acc = 0;
  for (int i = 0; i < n; i += 8) {
    unsigned int v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      v[j] = load_relaxed(word);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      acc += v[j];
  }
  if (acc == 12345u) word[64] = acc;
}

enum class Release { red_release, none };
enum class Acquire { fence, load, every_poll, none };
enum class Arrive { red, atom };  // atom: the poll starts once the atomic's answer is back

// One flip barrier per iteration (see parpat/cuda/grid_barrier.cuh): block 0 adds
// 0x80000000 − (n − 1), the others 1, so bit 31 flips at the last arrival. Polls start
// DelayCycles after the arrival. Style bit 1: polls in runs of 4 unrolled with a clock read
// between runs of 1024 (parpat's bounded spin, with a bound too large to matter); bit 2: the block
// leaves through __syncthreads_and (parpat's failure report) instead of __syncthreads. No real
// bound on the spin: this probe only runs on an idle GPU with every block resident (cooperative
// launch).
template <Release R, Acquire A, Arrive V = Arrive::red, int DelayCycles = 0, int Style = 0>
__global__ void flip_kernel(unsigned int* word, int barriers) {
  bool ok = true;
  unsigned int generation = load_relaxed(word) & 0x80000000u;
  unsigned int add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
  for (int k = 0; k < barriers; ++k) {
    generation ^= 0x80000000u;
    __syncthreads();
    if (threadIdx.x == 0) {
      if constexpr (V == Arrive::atom) {
        unsigned int old;
        if constexpr (R == Release::red_release)
          asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;"
                       : "=r"(old)
                       : "l"(global_address(word)), "r"(add)
                       : "memory");
        else
          asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
                       : "=r"(old)
                       : "l"(global_address(word)), "r"(add)
                       : "memory");
        if (old == 12345u) word[64] = old;  // the answer is awaited before the first poll
      } else if constexpr (R == Release::red_release) {
        asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(global_address(word)),
                     "r"(add)
                     : "memory");
      } else {
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(global_address(word)),
                     "r"(add)
                     : "memory");
      }
      if constexpr (DelayCycles > 0)
        for (long long t = clock64(); clock64() - t < DelayCycles;) {
        }
      if constexpr ((Style & 1) != 0) {
        long long start = clock64();
        bool seen = false;
        while (!seen) {
          for (unsigned int polls = 0; !seen && polls < 1024; polls += 4) {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
              if ((load_relaxed(word) & 0x80000000u) == generation) {
                seen = true;
                break;
              }
            }
          }
          if (!seen && clock64() - start > (1ll << 40)) ok = false;
        }
      } else {
        for (;;) {
          unsigned int v = A == Acquire::every_poll ? load_acquire(word) : load_relaxed(word);
          if ((v & 0x80000000u) == generation) break;
        }
      }
      if constexpr (A == Acquire::fence) asm volatile("fence.acquire.gpu;" ::: "memory");
      if constexpr (A == Acquire::load) load_acquire(word);
    }
    if constexpr ((Style & 2) != 0) {
      if (!__syncthreads_and(ok)) return;
    } else {
      __syncthreads();
    }
  }
}

// The arrivals and polls spread over a table of M rows × K words, Stride lines apart (parpat's
// `flip` table in its lean form): block b adds its share, after one release fence, to the K words
// of row b mod M, and from 200 cycles after its arrival polls the M words of column (b / M) mod K,
// all M loads in flight at once. Each row keeps the flip arithmetic among its own blocks with a
// generation of two bits (bits 30-31), read at the start from the block's own row, so that a
// launch needs no reset: a waiter may see another row already at the next barrier, and two bits
// tell that from the last one. Lean form: no bound on the spin, no failure report.
template <int M, int K, int Stride>
__global__ void table_kernel(unsigned int* word, int barriers) {
  unsigned int row = blockIdx.x % M;
  unsigned int column = (blockIdx.x / M) % K;
  auto at = [&](unsigned int r, unsigned int c) { return word + (r * K + c) * Stride * 32; };
  unsigned int members = gridDim.x / M + (row < gridDim.x % M ? 1u : 0u);
  unsigned int add = blockIdx.x == row ? 0x40000000u - (members - 1u) : 1u;
  unsigned int generation = load_relaxed(at(row, 0)) >> 30;
  for (int k = 0; k < barriers; ++k) {
    generation = (generation + 1u) & 3u;
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
#pragma unroll
      for (int c = 0; c < K; ++c)
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(global_address(at(row, c))),
                     "r"(add)
                     : "memory");
      for (long long t = clock64(); clock64() - t < 200;) {
      }
      for (bool all = false; !all;) {
        unsigned int v[M];
#pragma unroll
        for (int r = 0; r < M; ++r)
          v[r] = load_relaxed(at(r, column));
        all = true;
#pragma unroll
        for (int r = 0; r < M; ++r)
          all = all && (((v[r] >> 30) - generation) & 3u) <= 1u;
      }
      asm volatile("fence.acquire.gpu;" ::: "memory");
    }
    __syncthreads();
  }
}

__global__ void cg_kernel(unsigned int*, int barriers) {
  for (int k = 0; k < barriers; ++k)
    cg::this_grid().sync();
}

using Kernel = void (*)(unsigned int*, int);

// Milliseconds of one cooperative launch of `kernel` over `blocks` blocks of 128.
float launch_ms(Kernel kernel, int blocks, unsigned int* word, int barriers) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  void* args[] = {&word, &barriers};
  check(cudaEventRecord(start), "cudaEventRecord");
  check(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(kernel), blocks, 128, args),
        "cudaLaunchCooperativeKernel");
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

float median_ms(Kernel kernel, int blocks, unsigned int* word, int barriers) {
  std::vector<float> times;
  for (int r = 0; r < 5; ++r)
    times.push_back(launch_ms(kernel, blocks, word, barriers));
  std::sort(times.begin(), times.end());
  return times[2];
}

double us_per_barrier(Kernel kernel, int blocks, unsigned int* word) {
  constexpr int kBarriers = 5000;
  launch_ms(kernel, blocks, word, 100);
  return 1000.0 *
         (median_ms(kernel, blocks, word, kBarriers) - median_ms(kernel, blocks, word, 0)) /
         kBarriers;
}

struct Variant {
  const char* name;
  Kernel kernel;
  int min_blocks = 1;  // a table of M rows needs a block in every row
};

}  // namespace

int main() {
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int clock_khz = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "cudaDeviceGetAttribute");
  unsigned int* word;
  long long* cycles;
  check(cudaMalloc(&word, kBufferBytes), "cudaMalloc");
  check(cudaMemset(word, 0, kBufferBytes), "cudaMemset");
  check(cudaMalloc(&cycles, kPrimitives * sizeof(long long)), "cudaMalloc");
  std::printf("%s, %d SMs, clock %d MHz\n", prop.name, prop.multiProcessorCount, clock_khz / 1000);

  primitives_kernel<<<1, 128>>>(word, cycles, 1000);
  check(cudaGetLastError(), "primitives_kernel");
  long long host[kPrimitives];
  check(cudaMemcpy(host, cycles, sizeof host, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf(
      "\nprimitive, timed by thread 0 of one block of 128 (each thread on a line of its own): "
      "cycles, µs\n");
  for (int p = 0; p < kPrimitives; ++p)
    std::printf("  %-28s %6lld  %.3f\n", kPrimitiveNames[p], host[p], host[p] * 1000.0 / clock_khz);

  std::printf("\none L2 line under load, thread 0 of each block: ns per operation at the line\n");
  for (int blocks : {1, 2, 8, 33, 132, 264, 1056}) {
    constexpr int kOps = 4096;
    auto ns_per_op = [&](Kernel kernel) {
      return 1e6 * (median_ms(kernel, blocks, word, kOps) - median_ms(kernel, blocks, word, 0)) /
             (double(blocks) * kOps);
    };
    std::printf("  %4d blocks: red %.2f ns, relaxed load %.2f ns\n", blocks,
                ns_per_op(line_reds_kernel), ns_per_op(line_loads_kernel));
  }

  const Variant variants[] = {
      {"cg grid.sync", cg_kernel},
      {"lean", flip_kernel<Release::red_release, Acquire::fence>},
      {"lean, load acquire", flip_kernel<Release::red_release, Acquire::load>},
      {"lean, acquire polls", flip_kernel<Release::red_release, Acquire::every_poll>},
      {"as in parpat", flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 0, 3>},
      {"lean, 100 later", flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 100>},
      {"lean, 200 later", flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 200>},
      {"lean, 300 later", flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 300>},
      {"lean, 800 later", flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 800>},
      {"as in parpat, 200 later",
       flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 200, 3>},
      {"as in parpat, 800 later",
       flip_kernel<Release::red_release, Acquire::fence, Arrive::red, 800, 3>},
      {"lean, atom", flip_kernel<Release::red_release, Acquire::fence, Arrive::atom>},
      {"component: no acquire", flip_kernel<Release::red_release, Acquire::none>},
      {"component: no release", flip_kernel<Release::none, Acquire::fence>},
      {"component: neither", flip_kernel<Release::none, Acquire::none>},
      {"lean, 200 later, 1 x 2 words 1 apart", table_kernel<1, 2, 1>},
      {"lean, 200 later, 1 x 4 words 1 apart", table_kernel<1, 4, 1>},
      {"lean, 200 later, 1 x 4 words 8 apart", table_kernel<1, 4, 8>},
      {"lean, 200 later, 1 x 4 words 128 apart", table_kernel<1, 4, 128>},
      {"lean, 200 later, 1 x 8 words 128 apart", table_kernel<1, 8, 128>},
      {"lean, 200 later, 2 x 4 words 128 apart", table_kernel<2, 4, 128>, 2},
      {"lean, 200 later, 4 x 4 words 128 apart", table_kernel<4, 4, 128>, 4},
  };
  int sms = prop.multiProcessorCount;
  std::vector<int> grids = {2, 4, 8, 16, 33, 66, sms, 2 * sms, 4 * sms, 8 * sms};
  std::printf("\nµs per barrier, blocks of 128 (one per SM up to %d)\n%-40s", sms, "variant");
  for (int g : grids)
    std::printf(" %7d", g);
  std::printf("\n");
  for (const auto& v : variants) {
    std::printf("%-40s", v.name);
    for (int g : grids) {
      int per_sm = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, 128, 0),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      if (g > per_sm * sms || g < v.min_blocks) {
        std::printf(" %7s", "-");
        continue;
      }
      check(cudaMemset(word, 0, kBufferBytes), "cudaMemset");
      std::printf(" %7.3f", us_per_barrier(v.kernel, g, word));
      std::fflush(stdout);
    }
    std::printf("\n");
  }

  std::printf("\nthe flip word's place: µs per barrier at %d blocks (one per SM) by offset\n", sms);
  Kernel flip = flip_kernel<Release::red_release, Acquire::fence>;
  for (size_t offset = 0; offset < kBufferBytes; offset += offset < 4096 ? 128 : 262144) {
    unsigned int* at = word + offset / sizeof(unsigned int);
    double us = us_per_barrier(flip, sms, at);
    double cg_us = us_per_barrier(cg_kernel, sms, at);
    std::printf("  %8zu bytes: flip %.3f, cg %.3f\n", offset, us, cg_us);
  }
  return 0;
}
