// histogram_opencl_floor: the OpenCL twin of histogram_floor's partition probe, the floor of an
// OpenCL `fast` histogram that sorts rows into buckets at 2^20 bins (as CUDA's does,
// kernels_bucketed.cuh). 2^28 rows uniform in [0, 2^20) (4 bytes each) are sorted by bucket
// (row >> 14, 64 buckets) in tiles of 16384, a group of 1024 work-items a tile: a count per value
// on a local counter per bucket and lane (32 columns), an exclusive scan of the 2048 counters, a
// place per value by one local atomic, and the tile's 16-bit offsets written out from local
// memory; then the rows are read back. No rule, no edges, no per-tile metadata: any OpenCL design
// that moves each row to its bucket must partition at least this fast. On NVIDIA's driver the
// kernel takes the PTX that the library's OpenCL kernels take there (red.shared, atom.shared,
// shfl.sync for the scan; NVIDIA_PTX; both from src/histogram/histogram_warp.cl); elsewhere plain
// OpenCL C 1.2 (a scan in local memory).
// Probes, each the median of 7 runs after 2, timed by the queue's profiling events:
//   read values         a plain read of the 4-byte rows (the reference);
//   partition, resident as many groups as run at once, each taking tiles in turn (the next
//                       tile's rows load while one is placed);
//   partition, a tile a group;
//   rows read back      the 2-byte offsets read straight;
//   16-bit, two ranges  the same bytes as 2^29 uniform 16-bit values counted per value as
//                       `fast` counts int16 and uint16 from 65536 bins in 48 KiB: two ranges of
//                       32768 rows in 8-bit fields (32 KiB), the groups of a pair over one chunk
//                       (the second reads it from L2), one local atomic per value in its range.
//                       No carries, no flush to global counts: a floor of that design.
//   16-bit, 5-bit fields, G a unit
//                       the same values in one range of 65536 rows in 5-bit fields (43.7 KiB,
//                       six a word), as `fast` counts 4-byte input at 65536 bins: groups of a
//                       grid of G a compute unit (G = 2, 4, 8) each take one returning local
//                       atomic per value, settle its carries in a register (a wrapped field
//                       lost 32, the field above gained 1) and add each nonzero row to a global
//                       table at the end (one global atomic a row): a floor of any one-range
//                       design, which must see every carry and flush its rows.
// Every probe's sum is checked against the host's: of the rows' low 14 bits, or of the 16-bit
// values (each group adds count · value over its rows).
// Build: cmake --build BUILD --target histogram_opencl_floor. Run: BUILD/bench/
// histogram_opencl_floor [--platform NAME] [--n N] [--json FILE] [--verbose] (FILE: the lines as
// JSON; --verbose: the build log, on NVIDIA with each kernel's registers).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern const char* const parpat_cl_histogram_warp;

namespace {

constexpr unsigned kGroup = 1024, kTile = kGroup * 4 * 4;

const char* kSource = R"CLC(
#define GROUP 1024
#define TILE (GROUP * 16)
#define SHIFT 14
#define COLUMNS 32
#define COUNTERS (64 * COLUMNS)

ulong fields(uint4 v, uint wide) {  // the low 14 bits of 4-byte rows, or the 16-bit fields
  if (wide) return (ulong)(v.x & 0x3FFF) + (v.y & 0x3FFF) + (v.z & 0x3FFF) + (v.w & 0x3FFF);
  return (ulong)(v.x & 0xFFFF) + (v.x >> 16) + (v.y & 0xFFFF) + (v.y >> 16) + (v.z & 0xFFFF) +
         (v.z >> 16) + (v.w & 0xFFFF) + (v.w >> 16);
}

// The group's sum of `mine` into partial[group].
void group_sum(ulong mine, __local ulong* sums, __global ulong* partial) {
  const uint lid = get_local_id(0);
  sums[lid] = mine;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint width = GROUP / 2; width; width /= 2) {
    if (lid < width) sums[lid] += sums[lid + width];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = sums[0];
}

// Word i of the input: 20-bit rows (mask 0xFFFFF), or two 16-bit values (mask all ones).
__kernel void fill_rows(__global uint* rows, ulong n, uint mask) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    ulong z = (i + 1) * 0x9E3779B97F4A7C15UL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    rows[i] = (uint)(z ^ (z >> 31)) & mask;
  }
}

// Adds n to a local word (red.shared on its 32-bit address with NVIDIA_PTX).
void add_to(__local uint* word, uint n) {
#if NVIDIA_PTX
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"((uint)(size_t)word), "r"(n) : "memory");
#else
  atomic_add(word, n);
#endif
}

// 16-bit values per value in two ranges: group g counts the values whose top bit is g % 2 over
// chunk g / 2, in 8-bit fields (row r in field r % 4 of word r / 4).
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void two_ranges16(
    __global const uint4* in, ulong vectors, __global ulong* partial) {
  __local uint fields[8192];
  __local ulong sums[GROUP];
  const uint lid = get_local_id(0), range = get_group_id(0) % 2;
  for (uint i = lid; i < 8192; i += GROUP)
    fields[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong chunks = get_num_groups(0) / 2, chunk = get_group_id(0) / 2;
  for (ulong i = chunk * GROUP + lid; i < vectors; i += chunks * GROUP) {
    const uint4 v = in[i];
    const uint words[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < 8; ++k) {
      const uint value = (words[k / 2] >> (16 * (k % 2))) & 0xFFFF;
      if (value >> 15 == range) add_to(fields + ((value & 0x7FFF) >> 2), 1u << (8 * (value & 3)));
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  ulong mine = 0;
  for (uint r = lid; r < 32768; r += GROUP)
    mine += (ulong)((fields[r >> 2] >> (8 * (r & 3))) & 0xFF) * (range * 32768 + r);
  group_sum(mine, sums, partial);
}

// Adds n to a local word and returns its old value (atom.shared on its 32-bit address with
// NVIDIA_PTX).
uint add_returning(__local uint* word, uint n) {
#if NVIDIA_PTX
  uint old;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "r"((uint)(size_t)word), "r"(n)
               : "memory");
  return old;
#else
  return atomic_add(word, n);
#endif
}

// 16-bit values in one range of 5-bit fields (row r in field r % 6 of word r / 6); each group
// sums count · value over its rows, with every carry settled, and adds its rows to `table`.
#define WORDS5 (65536 / 6 + 1)
#define CARRY_BITS 0x42108420u /* bits 5, 10, 15, 20, 25 and 30: a field's carry out */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void one_range5(
    __global const uint4* in, ulong vectors, __global uint* table, __global ulong* partial) {
  __local uint words[WORDS5];
  const uint lid = get_local_id(0);
  for (uint i = lid; i < WORDS5; i += GROUP)
    words[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  ulong mine = 0;
  for (ulong i = get_global_id(0); i < vectors; i += get_global_size(0)) {
    const uint4 v = in[i];
    const uint halves[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < 8; ++k) {
      const uint value = (halves[k / 2] >> (16 * (k % 2))) & 0xFFFF;
      const uint word = value / 6, field = value - 6 * word, addend = 1u << (5 * field);
      const uint old = add_returning(words + word, addend);
      uint carries = (old ^ addend ^ (old + addend)) & CARRY_BITS;
      while (carries) {  // a field wrapped: its row lost 32, the row above (if any) gained 1
        const uint j = 31 - clz(carries);
        carries ^= 1u << j;
        const uint row = 6 * word + j / 5 - 1;
        mine += 32ul * row;
        if (j < 30 && row + 1 < 65536) mine -= row + 1;  // fields past row 65535: never read
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = lid; r < 65536; r += GROUP) {
    const uint count = (words[r / 6] >> (5 * (r % 6))) & 31;
    if (count) {
      atomic_add(table + r, count);
      mine += (ulong)count * r;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  group_sum(mine, (__local ulong*)words, partial);
}

__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void read_words(
    __global const uint4* in, ulong vectors, uint wide, __global ulong* partial) {
  __local ulong sums[GROUP];
  ulong mine = 0;
  for (ulong i = get_global_id(0); i < vectors; i += get_global_size(0))
    mine += fields(in[i], wide);
  group_sum(mine, sums, partial);
}

// Exclusive prefix sums of the 2048 counters, two a work-item (group_inclusive_sum: warp scans
// with NVIDIA_PTX, else a scan of the pairs' sums in local memory).
void scan(__local uint* a, __local uint* scratch) {
  const uint lid = get_local_id(0), first = a[2 * lid], sum = first + a[2 * lid + 1];
  uint total;
  const uint running = group_inclusive_sum(sum, scratch, &total) - sum;
  a[2 * lid] = running;
  a[2 * lid + 1] = running + first;
  barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void partition(
    __global const uint4* in, __global uint4* out, uint tiles, __global ulong* partial) {
  __local uint4 staging[TILE / 8];
  __local uint cursor[COUNTERS];
  __local uint scratch[GROUP];
  __local ulong sums[GROUP];
  __local ushort* places_of = (__local ushort*)staging;
  const uint lid = get_local_id(0), column = lid % COLUMNS;
  ulong mine = 0;
  uint4 next[4];
  uint tile = get_group_id(0);
  for (int u = 0; u < 4; ++u)
    next[u] = tile < tiles ? in[tile * (TILE / 4) + u * GROUP + lid] : (uint4)(0);
  for (; tile < tiles; tile += get_num_groups(0)) {
    uint rows[16], places[16];
    for (int u = 0; u < 4; ++u) {
      rows[4 * u] = next[u].x, rows[4 * u + 1] = next[u].y;
      rows[4 * u + 2] = next[u].z, rows[4 * u + 3] = next[u].w;
    }
    const uint ahead = tile + get_num_groups(0);
    for (int u = 0; u < 4; ++u)
      next[u] = ahead < tiles ? in[ahead * (TILE / 4) + u * GROUP + lid] : (uint4)(0);
    cursor[lid] = 0;
    cursor[lid + GROUP] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 16; ++k)
      count_one(LOCAL_ADDRESS(cursor + (rows[k] >> SHIFT) * COLUMNS + column));
    barrier(CLK_LOCAL_MEM_FENCE);
    scan(cursor, scratch);
    for (int k = 0; k < 16; ++k)
      places[k] = take_one(LOCAL_ADDRESS(cursor + (rows[k] >> SHIFT) * COLUMNS + column));
    for (int k = 0; k < 16; ++k)
      places_of[places[k]] = (ushort)(rows[k] & 0x3FFF);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < TILE / 8; i += GROUP) {
      const uint4 v = staging[i];
      out[tile * (TILE / 8) + i] = v;
      mine += fields(v, 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // staging and cursor are written again
  }
  group_sum(mine, sums, partial);
}
)CLC";

void check(cl_int e, const char* what) {
  if (e != CL_SUCCESS) {
    std::fprintf(stderr, "histogram_opencl_floor: %s failed (OpenCL error %d)\n", what, e);
    std::exit(1);
  }
}

std::string info(cl_platform_id p, cl_platform_info what) {
  char text[256] = {};
  clGetPlatformInfo(p, what, sizeof text - 1, text, nullptr);
  return text;
}

struct Probe {
  std::string name;
  double us;
  bool checked;
};

}  // namespace

int main(int argc, char** argv) {
  std::string want, json;
  unsigned long long n = 1ull << 28;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--platform" && i + 1 < argc) {
      want = argv[++i];
    } else if (a == "--n" && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      std::fprintf(stderr,
                   "usage: histogram_opencl_floor [--platform NAME] [--n N] [--json FILE] "
                   "[--verbose]\n");
      return 2;
    }
  }
  if (n == 0 || n % kTile) {
    std::fprintf(stderr, "histogram_opencl_floor: --n must be a positive multiple of %u\n", kTile);
    return 2;
  }
  // The platform: the one named, else the first with a GPU, else the first.
  cl_uint count = 0;
  check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  for (int pass = 0; pass < 2 && !device; ++pass) {
    for (cl_platform_id p : platforms) {
      if (!want.empty() && info(p, CL_PLATFORM_NAME).find(want) == std::string::npos) continue;
      const cl_device_type type =
          pass == 0 && want.empty() ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL;
      if (clGetDeviceIDs(p, type, 1, &device, nullptr) == CL_SUCCESS) {
        platform = p;
        break;
      }
      device = nullptr;
    }
  }
  if (!device) {
    std::fprintf(stderr, "histogram_opencl_floor: no OpenCL device%s\n",
                 want.empty() ? "" : (" on a platform named " + want).c_str());
    return 2;
  }
  char device_name[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof device_name - 1, device_name, nullptr);
  size_t max_group = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group, &max_group, nullptr);
  if (max_group < kGroup) {
    std::fprintf(stderr, "histogram_opencl_floor: groups of %u work-items do not fit %s\n", kGroup,
                 device_name);
    return 2;
  }
  const bool nvidia = info(platform, CL_PLATFORM_NAME).find("NVIDIA") != std::string::npos;
  cl_int e = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &e);
  check(e, "clCreateContext");
  cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &e);
  check(e, "clCreateCommandQueue");
  // The library's local atomics and warp instructions first (histogram_warp.cl), then the probes.
  const char* sources[] = {parpat_cl_histogram_warp, kSource};
  cl_program program = clCreateProgramWithSource(context, 2, sources, nullptr, &e);
  check(e, "clCreateProgramWithSource");
  const std::string options = std::string("-DNVIDIA_PTX=") + (nvidia ? "1" : "0") +
                              (nvidia && verbose ? " -cl-nv-verbose" : "");
  const bool built =
      clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr) == CL_SUCCESS;
  if (!built || verbose) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    std::fprintf(stderr, "histogram_opencl_floor: %s:\n%s\n",
                 built ? "build log" : "the kernels do not build", log.c_str());
    if (!built) return 1;
  }
  auto kernel = [&](const char* name) {
    cl_kernel k = clCreateKernel(program, name, &e);
    check(e, name);
    return k;
  };
  cl_kernel fill = kernel("fill_rows"), read = kernel("read_words"), part = kernel("partition");
  cl_kernel ranges16 = kernel("two_ranges16"), range5 = kernel("one_range5");
  cl_uint units = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
  const unsigned tiles = unsigned(n / kTile), resident = std::min<unsigned>(units, tiles);
  cl_mem rows = clCreateBuffer(context, CL_MEM_READ_WRITE, n * 4, nullptr, &e);
  check(e, "clCreateBuffer");
  cl_mem sorted = clCreateBuffer(context, CL_MEM_READ_WRITE, n * 2, nullptr, &e);
  check(e, "clCreateBuffer");
  cl_mem partial = clCreateBuffer(context, CL_MEM_READ_WRITE,
                                  std::max<std::size_t>(tiles, 8 * units) * 8, nullptr, &e);
  check(e, "clCreateBuffer");
  cl_mem table = clCreateBuffer(context, CL_MEM_READ_WRITE, 65536 * 4, nullptr, &e);
  check(e, "clCreateBuffer");

  // The rows, and on the host the sum of their low 14 bits (the same hash).
  size_t fill_global = std::size_t(units) * 256, fill_local = 256;
  check(clSetKernelArg(fill, 0, sizeof rows, &rows), "clSetKernelArg");
  check(clSetKernelArg(fill, 1, sizeof n, &n), "clSetKernelArg");
  auto fill_words = [&](cl_uint mask) {
    check(clSetKernelArg(fill, 2, sizeof mask, &mask), "clSetKernelArg");
    check(clEnqueueNDRangeKernel(queue, fill, 1, nullptr, &fill_global, &fill_local, 0, nullptr,
                                 nullptr),
          "fill_rows");
  };
  // The host's hash of word i (fill_rows' without the mask).
  auto word = [](unsigned long long i) {
    unsigned long long z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return unsigned(z ^ (z >> 31));
  };
  fill_words(0xFFFFF);
  unsigned long long expected = 0;
  for (unsigned long long i = 0; i < n; ++i)
    expected += word(i) & 0x3FFF;

  // Times `groups` groups of a kernel whose groups write partial sums; checks their total.
  auto probe = [&](const char* name, cl_kernel k, unsigned groups) {
    const size_t global = std::size_t(groups) * kGroup, local = kGroup;
    std::vector<double> us;
    bool checked = true;
    for (int run = 0; run < 9; ++run) {
      cl_event done;
      check(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, &local, 0, nullptr, &done), name);
      check(clWaitForEvents(1, &done), name);
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      clReleaseEvent(done);
      if (run >= 2) us.push_back(double(end - start) / 1e3);
      std::vector<unsigned long long> sums(groups);
      check(clEnqueueReadBuffer(queue, partial, CL_TRUE, 0, groups * 8ull, sums.data(), 0, nullptr,
                                nullptr),
            "clEnqueueReadBuffer");
      unsigned long long total = 0;
      for (unsigned long long s : sums)
        total += s;
      checked &= total == expected;
    }
    std::sort(us.begin(), us.end());
    const Probe p{name, us[us.size() / 2], checked};
    std::printf("%-28s %10.1f us  %7.0f GB/s of 4-byte values  %s\n", name, p.us,
                n * 4.0 / (p.us * 1e3), checked ? "checked" : "WRONG");
    return p;
  };
  const cl_uint wide = 1, narrow = 0;
  const unsigned long long values = n / 4, halves = n / 8;
  std::vector<Probe> probes;
  check(clSetKernelArg(read, 0, sizeof rows, &rows), "clSetKernelArg");
  check(clSetKernelArg(read, 1, sizeof values, &values), "clSetKernelArg");
  check(clSetKernelArg(read, 2, sizeof wide, &wide), "clSetKernelArg");
  check(clSetKernelArg(read, 3, sizeof partial, &partial), "clSetKernelArg");
  probes.push_back(probe("read values", read, std::min(tiles, units * 2)));
  check(clSetKernelArg(part, 0, sizeof rows, &rows), "clSetKernelArg");
  check(clSetKernelArg(part, 1, sizeof sorted, &sorted), "clSetKernelArg");
  check(clSetKernelArg(part, 2, sizeof tiles, &tiles), "clSetKernelArg");
  check(clSetKernelArg(part, 3, sizeof partial, &partial), "clSetKernelArg");
  probes.push_back(probe("partition, resident", part, resident));
  probes.push_back(probe("partition, a tile a group", part, tiles));
  check(clSetKernelArg(read, 0, sizeof sorted, &sorted), "clSetKernelArg");
  check(clSetKernelArg(read, 1, sizeof halves, &halves), "clSetKernelArg");
  check(clSetKernelArg(read, 2, sizeof narrow, &narrow), "clSetKernelArg");
  probes.push_back(probe("rows read back", read, std::min(tiles, units * 2)));
  // The same bytes as 16-bit values: the sum of all of them.
  fill_words(0xFFFFFFFFu);
  expected = 0;
  for (unsigned long long i = 0; i < n; ++i) {
    const unsigned w = word(i);
    expected += (w & 0xFFFF) + (w >> 16);
  }
  check(clSetKernelArg(ranges16, 0, sizeof rows, &rows), "clSetKernelArg");
  check(clSetKernelArg(ranges16, 1, sizeof values, &values), "clSetKernelArg");
  check(clSetKernelArg(ranges16, 2, sizeof partial, &partial), "clSetKernelArg");
  // Pairs of groups, a pair a compute unit (the library's per_value16_groups_per_cu), or more so
  // that a group's fields hold about 64 values a row (none reaches 256: no carries here).
  const unsigned pairs = std::max<unsigned>(units, unsigned((2 * n + (1u << 22) - 1) >> 22));
  probes.push_back(probe("16-bit, two ranges", ranges16, 2 * pairs));
  check(clSetKernelArg(range5, 0, sizeof rows, &rows), "clSetKernelArg");
  check(clSetKernelArg(range5, 1, sizeof values, &values), "clSetKernelArg");
  check(clSetKernelArg(range5, 2, sizeof table, &table), "clSetKernelArg");
  check(clSetKernelArg(range5, 3, sizeof partial, &partial), "clSetKernelArg");
  for (unsigned per_unit : {2u, 4u, 8u}) {
    const std::string name = "16-bit, 5-bit fields, " + std::to_string(per_unit) + " a unit";
    probes.push_back(probe(name.c_str(), range5, per_unit * units));
  }
  const double partition = std::min(probes[1].us, probes[2].us);
  const double ceiling = n * 4.0 / ((partition + probes[3].us) * 1e3);
  std::printf("rows partitioned, then read back: <= %.0f GB/s of 4-byte values (%s, %s)\n", ceiling,
              device_name, nvidia ? "PTX" : "OpenCL C");
  bool all = true;
  for (const Probe& p : probes)
    all &= p.checked;
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "histogram_opencl_floor: cannot write %s\n", json.c_str());
      return 2;
    }
    std::fprintf(
        f, "{\"device\": \"%s\", \"platform\": \"%s\", \"ptx\": %s, \"n\": %llu, \"probes\": [",
        device_name, info(platform, CL_PLATFORM_NAME).c_str(), nvidia ? "true" : "false", n);
    for (std::size_t i = 0; i < probes.size(); ++i)
      std::fprintf(f,
                   "%s\n  {\"probe\": \"%s\", \"us\": %.1f, \"gb_per_s\": %.1f, \"checked\": %s}",
                   i ? "," : "", probes[i].name.c_str(), probes[i].us,
                   n * 4.0 / (probes[i].us * 1e3), probes[i].checked ? "true" : "false");
    std::fprintf(f, "],\n \"rows_partitioned_gb_per_s\": %.1f}\n", ceiling);
    std::fclose(f);
  }
  return all ? 0 : 1;
}
