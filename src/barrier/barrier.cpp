// Barrier dispatch: the registry entries of every backend built in, and the public entry points,
// which check every request (sizes, the largest safe group count) before a backend launches
// anything, so that an unsafe request is refused up front and never hangs.
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>

#include "barrier/barrier_internal.hpp"
#include "parpat/error.hpp"
#include "runtime/variant_table.hpp"
#include "runtime/variant_tables.hpp"

#ifdef PARPAT_PATTERN_HAS_OPENCL
extern const char* const parpat_cl_grid_barrier;
#endif

namespace parpat {

namespace detail {

PARPAT_DEFINE_VARIANT_TABLE(barrier, BarrierVariant, "method")

std::uint32_t stencil_expected(std::int64_t steps) {
  std::uint32_t value = 1, base = 3;
  for (std::uint64_t e = static_cast<std::uint64_t>(steps); e; e >>= 1) {
    if (e & 1) value *= base;
    base *= base;
  }
  return value;
}

double median_ms(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  std::size_t n = times.size();
  return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

}  // namespace detail

namespace {

constexpr int kUnlimitedGroupSize = 1 << 20;

// The first backend failure of a method on each device, so that a later failure on the same
// device (a CUDA error is sticky: once a kernel faulted, every later call in the process fails)
// names the method that caused it rather than only the one that happened to run next.
std::mutex first_failure_mutex;
std::map<std::string, std::string> first_failure;

// Runs one backend call of method `v`; a backend error comes back naming the method and, when an
// earlier method already failed on this device, that method too. Invalid and unsupported
// requests pass unchanged.
template <class F>
void run_method(const Device& device, const detail::BarrierVariant& v, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::backend) throw;
    std::string message =
        "the " + v.info.name + " barrier failed on " + device.label() + ": " + e.what();
    {
      std::lock_guard<std::mutex> lock(first_failure_mutex);
      auto [earlier, first] = first_failure.emplace(device.label(), message);
      if (!first && earlier->second != message)
        message += " (this device has been failing since: " + earlier->second + ")";
    }
    throw Error(ErrorKind::backend, message, e.backend(), e.call(), e.code());
  }
}

// The method asked for; an empty name is the backend's default, or `relaunch` on a device whose
// groups do not progress independently (a spin barrier would hang there).
const detail::BarrierVariant& resolve(const Device& device, const std::string& method) {
  if (method.empty() && !device.info().independent_groups)
    return detail::find_barrier_variant(device.backend(), "relaunch");
  return detail::find_barrier_variant(device.backend(), method);
}

// On the CPU a group is one thread-pool task of group_size items, so any size is fine there.
void check_group_size(const Device& device, int group_size) {
  int largest =
      device.backend() == Backend::cpu ? kUnlimitedGroupSize : device.info().max_group_size;
  if (group_size < 1 || group_size > largest)
    throw_invalid("group size " + std::to_string(group_size) + " is outside 1.." +
                  std::to_string(largest) + " on " + device.label());
}

// Refuses `groups` above what `method` can keep resident, naming the largest safe count.
void check_groups(const Device& device, const detail::BarrierVariant& v, int groups,
                  int group_size) {
  int largest = 0;
  run_method(device, v, [&] { largest = v.max_groups(device, group_size); });
  if (groups < 1 || groups > largest)
    throw_invalid("the " + v.info.name + " barrier cannot synchronise " + std::to_string(groups) +
                  " groups of " + std::to_string(group_size) + " on " + device.label() +
                  ": the largest safe grid is " + std::to_string(largest) + " groups");
}

}  // namespace

std::vector<std::string> barrier_methods(const Device& device) {
  std::vector<std::string> out;
  for (const auto& v : list_variants("barrier"))
    if (v.backend == backend_name(device.backend())) out.push_back(v.name);
  return out;
}

int barrier_max_groups(const Device& device, const std::string& method, int group_size) {
  check_group_size(device, group_size);
  const auto& v = resolve(device, method);
  int largest = 0;
  run_method(device, v, [&] { largest = v.max_groups(device, group_size); });
  return largest;
}

int opencl_grid_barrier_groups(const Device& device, int group_size, std::size_t local_bytes) {
  if (device.backend() != Backend::opencl)
    throw_invalid("opencl_grid_barrier_groups needs an OpenCL device, got " + device.label());
  check_group_size(device, group_size);
  if (local_bytes > device.info().local_memory)
    throw_invalid(std::to_string(local_bytes) + " bytes of local memory per group exceed the " +
                  std::to_string(device.info().local_memory) + " of " + device.label());
#ifdef PARPAT_PATTERN_HAS_OPENCL
  return detail::opencl_user_barrier_groups(device, group_size, local_bytes);
#else
  throw Error(ErrorKind::unsupported, "this build has no OpenCL barrier");
#endif
}

const char* opencl_grid_barrier_source() {
#ifdef PARPAT_PATTERN_HAS_OPENCL
  return parpat_cl_grid_barrier;
#else
  throw Error(ErrorKind::unsupported, "this build has no OpenCL barrier");
#endif
}

StencilResult barrier_stencil(const Device& device, const StencilOptions& options) {
  const auto& v = resolve(device, options.method);
  check_group_size(device, options.group_size);
  if (options.work_items < 1 || options.work_items % options.group_size != 0)
    throw_invalid(
        "the stencil needs a positive number of work-items that is a multiple of the "
        "group size (" +
        std::to_string(options.work_items) + " items, groups of " +
        std::to_string(options.group_size) + ")");
  if (options.work_items < 3) throw_invalid("the stencil needs at least 3 work-items");
  if (options.steps < 0) throw_invalid("the number of steps must not be negative");
  int groups = options.work_items / options.group_size;
  check_groups(device, v, groups, options.group_size);
  StencilResult r;
  run_method(device, v, [&] { v.stencil(device, groups, options.group_size, options.steps, r); });
  r.method = v.info.name;
  r.work_items = options.work_items;
  r.group_size = options.group_size;
  r.groups = groups;
  r.steps = options.steps;
  r.correct = r.all_equal && !r.barrier_failed && r.value == detail::stencil_expected(r.steps);
  return r;
}

StressResult barrier_stress(const Device& device, const StressOptions& options) {
  const auto& v = resolve(device, options.method);
  check_group_size(device, options.group_size);
  if (options.rounds < 1 || options.rounds > UINT_MAX / 2)
    throw_invalid("the stress test needs between 1 and 2^31 rounds");
  int groups = options.groups;
  if (groups == 0) {
    int largest = 0;
    run_method(device, v, [&] { largest = v.max_groups(device, options.group_size); });
    groups = std::min(largest, 2 * std::max(1, device.info().compute_units));
  }
  check_groups(device, v, groups, options.group_size);
  StressResult r;
  run_method(device, v, [&] { v.stress(device, groups, options.group_size, options.rounds, r); });
  r.method = v.info.name;
  r.groups = groups;
  r.group_size = options.group_size;
  r.rounds = options.rounds;
  return r;
}

LatencyResult barrier_latency(const Device& device, const std::string& method, int groups,
                              int group_size, int barriers, int reps) {
  const auto& v = resolve(device, method);
  check_group_size(device, group_size);
  if (barriers < 1) throw_invalid("the latency needs at least one barrier");
  if (reps < 1) throw_invalid("the latency needs at least one timed run");
  check_groups(device, v, groups, group_size);
  bool failed_empty = false, failed = false;
  double empty = 0, full = 0;
  run_method(device, v, [&] {
    empty = v.barriers_ms(device, groups, group_size, 0, reps, failed_empty);
    full = v.barriers_ms(device, groups, group_size, barriers, reps, failed);
  });
  LatencyResult r;
  r.method = v.info.name;
  r.groups = groups;
  r.group_size = group_size;
  r.barriers = barriers;
  r.barrier_failed = failed || failed_empty;
  r.barriers_ms = full;
  r.empty_ms = empty;
  r.us_per_barrier = std::max(0.0, full - empty) * 1e3 / barriers;
  return r;
}

}  // namespace parpat
