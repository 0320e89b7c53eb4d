// Grid barriers on OpenCL (barrier.cl on top of the users' header grid_barrier.cl).
//
// Which group counts are safe: OpenCL promises nothing about groups being resident together
// and has no cooperative launch, so the bound is an occupancy estimate that is then validated
// on the device. The estimate: on NVIDIA (cl_nv_device_attribute_query) the resident threads
// per SM of the compute capability, counted as if every thread used 64 registers (so kernels up
// to that size fit) and capped at 16 groups per SM; elsewhere one group per compute unit; in
// both cases no more groups per unit than its local memory holds. The validation: before a
// spin method is offered on a device, its stress test runs there at that bound; any early
// release or timed-out spin refuses the method (with the reason) for the rest of the process.
//
// Why NVIDIA's OpenCL needs that validation: its OpenCL C is 1.2, without device-scope
// acquire/release. The barriers rely on what the driver does in practice — atomics performed
// at L2, volatile loads bypassing the non-coherent L1, mem_fence(CLK_GLOBAL_MEM_FENCE) ordering
// global accesses device-wide — none of which the 1.2 specification guarantees across groups.
// The stress test checks exactly the property that would break (a group leaving before all
// arrived, or reading stale data), so a passing test is the evidence; a failing one keeps the
// platform on `relaunch`.
//
// Devices without independent forward progress of groups (DeviceInfo::independent_groups false:
// PoCL and other CPU drivers) are refused every spin method up front; `relaunch` runs there.
#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "barrier/barrier_internal.hpp"
#include "parpat/array.hpp"
#include "runtime/opencl/opencl_device.hpp"

extern const char* const parpat_cl_barrier;
extern const char* const parpat_cl_grid_barrier;

namespace parpat::detail {

namespace {

enum Method { atomic_all = 0, representative = 1, flags = 2, flip = 3 };

const char* method_name(int m) {
  static const char* names[] = {"atomic-all", "representative", "flags", "flip"};
  return names[m];
}

const std::string& barrier_source() {
  static const std::string source =
      std::string(parpat_cl_grid_barrier) + "\n" + std::string(parpat_cl_barrier);
  return source;
}

cl::Kernel barrier_kernel(OpenclDevice& cl, int method, const char* name) {
  return cl.kernel("barrier.cl", barrier_source(), "-DBARRIER_METHOD=" + std::to_string(method),
                   name);
}

cl::Kernel relaunch_kernel(OpenclDevice& cl, const char* name) {
  return cl.kernel("barrier.cl", barrier_source(), "", name);
}

// Resident threads per SM by compute capability (NVIDIA).
int nvidia_threads_per_cu(int major, int minor) {
  if (major == 7 && minor == 5) return 1024;
  if (major == 8 && minor != 0) return 1536;
  if (major >= 12) return 1536;
  return 2048;
}

// The estimated number of co-resident groups of `group_size` using `local` bytes of local
// memory each (see the top).
int estimated_groups(OpenclDevice& cl, int group_size, std::size_t local) {
  const DeviceInfo& info = cl.info();
  int per_cu = 1;
  if (cl.has_extension("cl_nv_device_attribute_query")) {
    constexpr cl_device_info kMajor = 0x4000, kMinor = 0x4001, kRegisters = 0x4002;
    cl_uint major = 0, minor = 0, registers = 0;
    clGetDeviceInfo(cl.device()(), kMajor, sizeof major, &major, nullptr);
    clGetDeviceInfo(cl.device()(), kMinor, sizeof minor, &minor, nullptr);
    clGetDeviceInfo(cl.device()(), kRegisters, sizeof registers, &registers, nullptr);
    int threads = nvidia_threads_per_cu(static_cast<int>(major), static_cast<int>(minor));
    if (registers > 0) threads = std::min<int>(threads, static_cast<int>(registers / 64));
    per_cu = std::clamp(threads / group_size, 1, 16);
  }
  if (local > 0 && info.local_memory > 0)
    per_cu = std::max(1, std::min<int>(per_cu, static_cast<int>(info.local_memory / local)));
  return per_cu * std::max(1, info.compute_units);
}

std::size_t kernel_local_bytes(OpenclDevice& cl, const cl::Kernel& kernel) {
  try {
    return kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(cl.device());
  } catch (const cl::Error& e) {
    rethrow_opencl(e);
  }
}

struct Workspace {
  Buffer buffer;
  Workspace(const Device& device, int groups)
      : buffer(device, (2 + 2 * static_cast<std::size_t>(groups)) * sizeof(cl_uint)) {}
  cl_mem mem() const { return as_mem(buffer.handle()); }
  void clear() const {
    std::vector<cl_uint> zeros(buffer.bytes() / sizeof(cl_uint), 0u);
    buffer.device().impl().upload(buffer.handle(), 0, zeros.data(), buffer.bytes());
  }
  bool failed() const {
    cl_uint error = 0;
    buffer.download(&error, sizeof error, sizeof(cl_uint));
    return error != 0;
  }
};

void run_stress(const Device& device, int method, int groups, int group_size, std::int64_t rounds,
                StressResult& result) {
  auto& cl = backend_cast<OpenclDevice>(device);
  cl::Kernel k = barrier_kernel(cl, method, "stress");
  Workspace ws(device, groups);
  Buffer slots(device, groups * sizeof(cl_uint)), early(device, sizeof(cl_uint));
  std::vector<cl_uint> zeros(static_cast<std::size_t>(groups), 0u);
  slots.upload(zeros.data(), slots.bytes());
  early.upload(zeros.data(), sizeof(cl_uint));
  ws.clear();
  set_args(k, ws.mem(), as_mem(slots.handle()), as_mem(early.handle()),
           static_cast<cl_uint>(rounds));
  cl.timer_start();
  cl.launch(k, static_cast<std::size_t>(groups) * group_size, group_size);
  result.time_ms = cl.timer_stop_ms();
  result.barrier_failed = ws.failed();
  cl_uint count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

// Whether `method` passed its stress test on this device (run once per device, method and
// group size, at the estimated bound). Returns the reason when it did not.
std::string validation_failure(const Device& device, int method, int group_size, int groups) {
  static std::mutex mutex;
  static std::map<std::string, std::string> verdicts;
  std::string key = device.label() + "/" + method_name(method) + "/" + std::to_string(group_size) +
                    "/" + std::to_string(groups);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = verdicts.find(key);
  if (it != verdicts.end()) return it->second;
  StressResult r;
  // atomic-all puts every work-item on one counter; fewer rounds keep its validation short.
  run_stress(device, method, groups, group_size, method == atomic_all ? 1000 : 5000, r);
  std::string verdict;
  if (r.barrier_failed)
    verdict = "its stress test with " + std::to_string(groups) +
              " groups timed out (the groups are not all resident at once)";
  else if (r.early_releases)
    verdict = "its stress test saw " + std::to_string(r.early_releases) + " early releases";
  return verdicts.emplace(key, verdict).first->second;
}

void require_independent_groups(const Device& device, int method) {
  if (!device.info().independent_groups)
    throw Error(ErrorKind::unsupported,
                std::string("the ") + method_name(method) + " barrier would hang on " +
                    device.label() +
                    ": this driver runs groups one after another, so a waiting group blocks "
                    "the rest (use the relaunch method)",
                "opencl");
}

void require_validated(const Device& device, int method, int group_size, int groups) {
  std::string failure = validation_failure(device, method, group_size, groups);
  if (!failure.empty())
    throw Error(ErrorKind::unsupported,
                std::string("the ") + method_name(method) + " barrier is disabled on " +
                    device.label() + ": " + failure + " (use the relaunch method)",
                "opencl");
}

template <int M>
int spin_max_groups(const Device& device, int group_size) {
  require_independent_groups(device, M);
  auto& cl = backend_cast<OpenclDevice>(device);
  std::size_t local = 0;
  for (const char* name : {"stencil", "stress", "latency"})
    local = std::max(local, kernel_local_bytes(cl, barrier_kernel(cl, M, name)));
  int groups = estimated_groups(cl, group_size, local);
  require_validated(device, M, group_size, groups);
  return groups;
}

template <int M>
void spin_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                  StencilResult& result) {
  auto& cl = backend_cast<OpenclDevice>(device);
  cl::Kernel k = barrier_kernel(cl, M, "stencil");
  cl_uint n = static_cast<cl_uint>(groups) * group_size;
  Workspace ws(device, groups);
  std::vector<cl_uint> host(n, 1u);
  Buffer a(device, n * sizeof(cl_uint));
  a.upload(host.data(), a.bytes());
  ws.clear();
  set_args(k, ws.mem(), as_mem(a.handle()), n, static_cast<cl_long>(steps));
  cl.timer_start();
  cl.launch(k, n, group_size);
  result.time_ms = cl.timer_stop_ms();
  result.barrier_failed = ws.failed();
  a.download(host.data(), a.bytes());
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

template <int M>
void spin_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                 StressResult& result) {
  run_stress(device, M, groups, group_size, rounds, result);
}

template <int M>
double spin_barriers_ms(const Device& device, int groups, int group_size, int barriers, int reps,
                        bool& failed) {
  auto& cl = backend_cast<OpenclDevice>(device);
  cl::Kernel k = barrier_kernel(cl, M, "latency");
  Workspace ws(device, groups);
  std::vector<double> times;
  failed = false;
  for (int rep = 0; rep < reps + 2; ++rep) {
    ws.clear();
    set_args(k, ws.mem(), static_cast<cl_int>(barriers));
    cl.timer_start();
    cl.launch(k, static_cast<std::size_t>(groups) * group_size, group_size);
    double ms = cl.timer_stop_ms();
    failed = failed || ws.failed();
    if (rep >= 2) times.push_back(ms);
  }
  return median_ms(times);
}

int relaunch_max_groups(const Device&, int) {
  return kUnlimitedGroups;
}

void relaunch_stencil(const Device& device, int groups, int group_size, std::int64_t steps,
                      StencilResult& result) {
  auto& cl = backend_cast<OpenclDevice>(device);
  cl::Kernel k = relaunch_kernel(cl, "stencil_step");
  cl_uint n = static_cast<cl_uint>(groups) * group_size;
  std::vector<cl_uint> host(n, 1u);
  Buffer a(device, n * sizeof(cl_uint)), b(device, n * sizeof(cl_uint));
  a.upload(host.data(), a.bytes());
  cl_mem from = as_mem(a.handle()), to = as_mem(b.handle());
  cl.timer_start();
  for (std::int64_t s = 0; s < steps; ++s) {
    set_args(k, from, to, n);
    cl.launch(k, n, group_size);
    std::swap(from, to);
  }
  result.time_ms = cl.timer_stop_ms();
  cl.download(from, 0, host.data(), n * sizeof(cl_uint));
  result.value = host[0];
  result.all_equal = std::all_of(host.begin(), host.end(), [&](auto v) { return v == host[0]; });
}

void relaunch_stress(const Device& device, int groups, int group_size, std::int64_t rounds,
                     StressResult& result) {
  auto& cl = backend_cast<OpenclDevice>(device);
  cl::Kernel publish = relaunch_kernel(cl, "stress_publish");
  cl::Kernel check = relaunch_kernel(cl, "stress_check");
  Buffer slots(device, groups * sizeof(cl_uint)), early(device, sizeof(cl_uint));
  cl_uint zero = 0;
  early.upload(&zero, sizeof zero);
  std::size_t global = static_cast<std::size_t>(groups) * group_size;
  cl.timer_start();
  for (std::int64_t r = 1; r <= rounds; ++r) {
    set_args(publish, as_mem(slots.handle()), static_cast<cl_uint>(r));
    cl.launch(publish, global, group_size);
    set_args(check, as_mem(slots.handle()), static_cast<cl_uint>(r), as_mem(early.handle()));
    cl.launch(check, global, group_size);
  }
  result.time_ms = cl.timer_stop_ms();
  cl_uint count = 0;
  early.download(&count, sizeof count);
  result.early_releases = count;
}

double relaunch_barriers_ms(const Device& device, int groups, int group_size, int barriers,
                            int reps, bool& failed) {
  auto& cl = backend_cast<OpenclDevice>(device);
  cl::Kernel k = relaunch_kernel(cl, "empty");
  failed = false;
  std::vector<double> times;
  for (int rep = 0; rep < reps + 2; ++rep) {
    cl.timer_start();
    for (int i = 0; i < barriers; ++i)
      cl.launch(k, static_cast<std::size_t>(groups) * group_size, group_size);
    double ms = cl.timer_stop_ms();
    if (rep >= 2) times.push_back(ms);
  }
  return median_ms(times);
}

VariantInfo info(const char* name, const char* idea, bool is_default = false) {
  VariantInfo v =
      variant_info("barrier", Backend::opencl, name, idea, "OpenCL C 1.2 atomics + mem_fence",
                   "GPUs with independent groups, after the stress test passes there");
  v.is_default = is_default;
  return v;
}

template <int M>
BarrierVariant spin_variant(VariantInfo v) {
  return {std::move(v), spin_max_groups<M>, spin_stencil<M>, spin_stress<M>, spin_barriers_ms<M>};
}

}  // namespace

int opencl_user_barrier_groups(const Device& device, int group_size, std::size_t local_bytes) {
  require_independent_groups(device, flip);
  auto& cl = backend_cast<OpenclDevice>(device);
  std::size_t local =
      std::max(local_bytes, kernel_local_bytes(cl, barrier_kernel(cl, flip, "stress")));
  int groups = estimated_groups(cl, group_size, local);
  require_validated(device, flip, group_size, groups);
  return groups;
}

std::vector<BarrierVariant> opencl_barrier_variants() {
  VariantInfo relaunch = info("relaunch", "one kernel launch per phase (baseline)");
  relaunch.params = "";
  relaunch.limits = "";
  return {
      spin_variant<atomic_all>(
          info("atomic-all", "every work-item adds 1 to one counter, waits for k·work-items")),
      spin_variant<representative>(
          info("representative", "one work-item per group adds 1, the group waits at barrier()")),
      spin_variant<flags>(
          info("flags", "Xiao & Feng: per-group in/out flags, group 0 gathers and releases")),
      spin_variant<flip>(
          info("flip", "one word, one atomic per group, bit-31 generation flip", true)),
      {relaunch, relaunch_max_groups, relaunch_stencil, relaunch_stress, relaunch_barriers_ms},
  };
}

}  // namespace parpat::detail
