// measure_peaks: dispatch to the backend's two probes, cached per device. measure_host_rates: the
// host side of a stream, copies from staging memory to the device and reads of a page-cached
// file, measured here for every backend alike.
#include "parpat/measure.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "parpat/array.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/measure_backends.hpp"

namespace parpat {

Peaks measure_peaks(const Device& device) {
  static std::mutex mutex;
  static std::map<const detail::DeviceImpl*, Peaks> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(&device.impl());
  if (it != cache.end()) return it->second;
  Peaks p;
  switch (device.backend()) {
    case Backend::cpu:
      p = detail::measure_cpu(device);
      break;
    case Backend::cuda:
#ifdef PARPAT_HAVE_CUDA
      p = detail::measure_cuda(device);
#endif
      break;
    case Backend::opencl:
#ifdef PARPAT_HAVE_OPENCL
      p = detail::measure_opencl(device);
#endif
      break;
  }
  cache.emplace(&device.impl(), p);
  return p;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr std::size_t kCopyBytes = std::size_t{256} << 20;
constexpr std::size_t kFileBytes = std::size_t{512} << 20;

// Synchronous uploads of 256 MiB from the backend's staging memory, the fastest of five after
// one untimed (the driver maps and pins lazily on some platforms).
double h2d_pinned_gbps(const Device& device) {
  if (device.backend() == Backend::cpu) return 0;
  std::size_t bytes = kCopyBytes;
  if (std::uint64_t memory = device.info().global_memory)
    bytes = std::min<std::size_t>(bytes, memory / 4 / 4096 * 4096);
  if (bytes == 0) return 0;
  detail::DeviceImpl& impl = device.impl();
  void* host = impl.allocate_host(bytes);
  struct Release {
    detail::DeviceImpl& impl;
    void* host;
    ~Release() { impl.release_host(host); }
  } release{impl, host};
  std::memset(host, 0x5a, bytes);
  Buffer buffer(device, bytes);
  double best = 0;
  for (int rep = 0; rep < 6; ++rep) {
    auto start = Clock::now();
    buffer.upload(host, bytes);
    double s = seconds_since(start);
    if (rep > 0 && s > 0) best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

// Reads [offset, offset + bytes) of `fd` into `dst` exactly; false on an error or a short file.
bool pread_all(int fd, char* dst, std::size_t bytes, std::size_t offset) {
  while (bytes > 0) {
    ssize_t got = ::pread(fd, dst, std::min<std::size_t>(bytes, std::size_t{64} << 20),
                          static_cast<off_t>(offset));
    if (got <= 0) return false;
    dst += got;
    offset += static_cast<std::size_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

// The fastest of the reads of the whole file, `threads` stripes read at once, GB/s: at least
// `min_runs`, then more (up to three) while the reads so far took less than a quarter second.
double read_rate(int fd, char* buffer, std::size_t bytes, int threads, int min_runs) {
  double best = 0, spent = 0;
  for (int rep = 0; rep < 3 && (rep < min_runs || spent < 0.25); ++rep) {
    std::vector<std::thread> pool;
    std::vector<char> ok(static_cast<std::size_t>(threads), 0);
    std::size_t stripe = (bytes / threads + 4095) / 4096 * 4096;
    auto start = Clock::now();
    for (int t = 0; t < threads; ++t) {
      std::size_t begin = std::min(bytes, t * stripe), end = std::min(bytes, begin + stripe);
      pool.emplace_back(
          [&, t, begin, end] { ok[t] = pread_all(fd, buffer + begin, end - begin, begin); });
    }
    for (auto& th : pool)
      th.join();
    double s = seconds_since(start);
    spent += s;
    if (std::count(ok.begin(), ok.end(), 0)) return 0;
    if (s > 0) best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

// Writes a 512 MiB file (more than the last-level cache of any host) in $TMPDIR or /tmp, unlinked
// at once so that nothing is left behind, then reads it: the first read by one thread warms the
// page cache (the write has left most of it there; its time only counts if no later read is
// faster), then reads by 1 and by N threads into the same buffer, which the write already faulted
// in. About a second on a host that reads its page cache at a few GB/s.
HostRates page_cache_rates() {
  HostRates r;
  unsigned hw = std::thread::hardware_concurrency();
  r.threads = static_cast<int>(std::clamp(hw, 1u, 8u));
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/parpat-measure-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) return r;
  ::unlink(path.c_str());
  void* mapped =
      ::mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    ::close(fd);
    return r;
  }
  ::madvise(mapped, kFileBytes, MADV_HUGEPAGE);  // fewer faults; a hint the kernel may ignore
  char* buffer = static_cast<char*>(mapped);
  std::memset(buffer, 0x5a, kFileBytes);
  bool written = true;
  for (std::size_t done = 0; written && done < kFileBytes;) {
    ssize_t put = ::write(fd, buffer + done, kFileBytes - done);
    written = put > 0;
    if (written) done += static_cast<std::size_t>(put);
  }
  if (written) {
    r.page_cache_read_gbps_1 = read_rate(fd, buffer, kFileBytes, 1, 2);
    r.page_cache_read_gbps_n = read_rate(fd, buffer, kFileBytes, r.threads, 1);
  }
  ::munmap(mapped, kFileBytes);
  ::close(fd);
  return r;
}

}  // namespace

HostRates measure_host_rates(const Device& device) {
  static std::mutex mutex;
  static std::map<const detail::DeviceImpl*, HostRates> cache;
  static std::optional<HostRates> machine;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(&device.impl());
  if (it != cache.end()) return it->second;
  if (!machine) machine = page_cache_rates();
  HostRates r = *machine;
  r.h2d_pinned_gbps = h2d_pinned_gbps(device);
  cache.emplace(&device.impl(), r);
  return r;
}

}  // namespace parpat
