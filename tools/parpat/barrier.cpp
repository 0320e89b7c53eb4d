// parpat barrier [--method M[,M...]|all] [--steps N] [--stress [--rounds N]] [--no-sweep]
//                [--no-stencil] [COMMON]
// The classic stencil (2048 work-items, groups of 1024, 64 and 32) timed for every method, the
// latency sweep (µs per barrier at 1–16 groups per compute unit × groups of 128 and 256) and,
// with --stress, the early-release stress test. A method the device cannot run safely is
// reported as refused, with the reason, and never launched. Tuning values (PARPAT_TUNING) are
// read at every launch, so one process measures one setting of them.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "parpat/barrier.hpp"
#include "parpat/error.hpp"

namespace parpat::cli {

namespace {

struct BarrierOpts {
  CommonOptions common;
  std::string method = "all";
  std::int64_t steps = 500000;
  int work_items = 2048;
  std::vector<int> group_sizes = {1024, 64, 32};
  bool sweep = true;
  bool stencil = true;
  int barriers = 0;  // 0: 1000 on GPUs, 100 elsewhere
  bool stress = false;
  std::int64_t rounds = 100000;
};

// Runs `f`. An Error(unsupported) comes back as its message (the method is refused here); an
// Error(backend) too, with `failed` set (the method broke on the device: the run goes on with
// the other methods, reports the failure, and exits with an error at the end).
template <class F>
std::string refused(F&& f, bool& failed) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unsupported && e.kind() != ErrorKind::backend) throw;
    failed = failed || e.kind() == ErrorKind::backend;
    return e.what();
  }
  return {};
}

void run_barrier(const BarrierOpts& o) {
  Device device = o.common.open_device();
  std::vector<std::string> methods;
  if (o.method == "all") {
    methods = barrier_methods(device);
  } else {
    for (std::size_t begin = 0; begin <= o.method.size();) {
      std::size_t end = std::min(o.method.find(',', begin), o.method.size());
      if (end > begin) methods.push_back(o.method.substr(begin, end - begin));
      begin = end + 1;
    }
    if (methods.empty()) throw_invalid("--method names no method");
  }
  bool gpu = device.backend() != Backend::cpu && device.info().independent_groups;
  int barriers = o.barriers > 0 ? o.barriers : gpu ? 1000 : 100;
  nlohmann::json out = {{"pattern", "barrier"},
                        {"backend", backend_name(device.backend())},
                        {"device", device.info().name},
                        {"stencil", nlohmann::json::array()}};
  bool text = !o.common.json;
  bool all_correct = true;
  std::vector<std::string> failures;
  int runnable = 0;

  if (text && o.stencil)
    std::cout << fmt::format("stencil on {}: {} work-items, {} steps\n", device.label(),
                             o.work_items, o.steps)
              << fmt::format("{:<15} {:>6} {:>7} {:>12} {:>10}  {}\n", "method", "group", "groups",
                             "time ms", "us/step", "result");
  for (const auto& m : o.stencil ? methods : std::vector<std::string>{}) {
    for (int g : o.group_sizes) {
      if (device.backend() != Backend::cpu && g > device.info().max_group_size) continue;
      StencilOptions so;
      so.method = m;
      so.work_items = o.work_items;
      so.group_size = g;
      so.steps = o.steps;
      StencilResult r;
      bool failed = false;
      std::string why = refused([&] { r = barrier_stencil(device, so); }, failed);
      if (failed) {
        failures.push_back(why);
        out["stencil"].push_back({{"method", m}, {"group_size", g}, {"error", why}});
        if (text) std::cout << fmt::format("{:<15} {:>6} FAILED: {}\n", m, g, why);
        continue;
      }
      if (!why.empty()) {
        out["stencil"].push_back({{"method", m}, {"group_size", g}, {"refused", why}});
        if (text) std::cout << fmt::format("{:<15} {:>6} refused: {}\n", m, g, why);
        continue;
      }
      ++runnable;
      all_correct = all_correct && r.correct;
      out["stencil"].push_back({{"method", r.method},
                                {"group_size", g},
                                {"groups", r.groups},
                                {"steps", r.steps},
                                {"all_equal", r.all_equal},
                                {"correct", r.correct},
                                {"barrier_failed", r.barrier_failed},
                                {"value", r.value},
                                {"time_ms", r.time_ms}});
      if (text)
        std::cout << fmt::format("{:<15} {:>6} {:>7} {:>12.3f} {:>10.3f}  {}\n", r.method, g,
                                 r.groups, r.time_ms, r.steps ? r.time_ms * 1e3 / r.steps : 0.0,
                                 r.correct ? "all equal, correct"
                                 : r.barrier_failed
                                     ? "FAILED (a barrier spin timed out)"
                                     : fmt::format("FAILED (all equal: {}, element 0 = {})",
                                                   r.all_equal ? "yes" : "no", r.value));
    }
  }

  if (o.sweep) {
    out["latency"] = nlohmann::json::array();
    // What no barrier can avoid on this device, measured in the same run: a release fence, the
    // arrival's trip to L2, and a poll's trip back.
    bench::BarrierFloor floor = bench::measure_barrier_floor(device);
    if (floor.release_fence_us > 0) {
      out["floor"] = {{"release_fence_us", floor.release_fence_us},
                      {"l2_round_trip_us", floor.l2_round_trip_us}};
      if (text) std::cout << fmt::format("\nmeasured on this device: {}\n", barrier_floor(floor));
    }
    if (text)
      std::cout << fmt::format("\nlatency, {} barriers: us per barrier = (T(K) - T(0)) / K\n",
                               barriers)
                << fmt::format("{:<15} {:>6} {:>8} {:>7} {:>12}\n", "method", "group", "per unit",
                               "groups", "us/barrier");
    int units = std::max(1, device.info().compute_units);
    for (const auto& m : methods) {
      for (int g : {128, 256}) {
        if (device.backend() != Backend::cpu && g > device.info().max_group_size) continue;
        int largest = 0;
        bool failed = false;
        std::string why = refused([&] { largest = barrier_max_groups(device, m, g); }, failed);
        if (failed) failures.push_back(why);
        if (!why.empty()) {
          // The stencil already reported the refusal, unless it did not run.
          if (!o.stencil) {
            out["latency"].push_back({{"method", m}, {"group_size", g}, {"refused", why}});
            if (text) std::cout << fmt::format("{:<15} {:>6} refused: {}\n", m, g, why);
          }
          continue;
        }
        for (int per : {1, 2, 4, 8, 16}) {
          int groups = per * units;
          if (groups > largest) break;
          LatencyResult r;
          why = refused([&] { r = barrier_latency(device, m, groups, g, barriers); }, failed);
          if (!why.empty()) {
            if (failed) failures.push_back(why);
            out["latency"].push_back(
                {{"method", m}, {"group_size", g}, {"groups", groups}, {"error", why}});
            if (text) std::cout << fmt::format("{:<15} {:>6} {:>8} FAILED: {}\n", m, g, per, why);
            break;
          }
          out["latency"].push_back({{"method", m},
                                    {"group_size", g},
                                    {"groups_per_unit", per},
                                    {"groups", groups},
                                    {"barriers", barriers},
                                    {"us_per_barrier", r.us_per_barrier},
                                    {"barrier_failed", r.barrier_failed}});
          all_correct = all_correct && !r.barrier_failed;
          ++runnable;
          if (text)
            std::cout << fmt::format("{:<15} {:>6} {:>8} {:>7} {:>12.3f}{}\n", m, g, per, groups,
                                     r.us_per_barrier,
                                     r.barrier_failed ? "  FAILED (spin timed out)" : "");
        }
      }
    }
  }

  if (o.stress) {
    out["stress"] = nlohmann::json::array();
    if (text)
      std::cout << fmt::format("\nstress test, {} rounds\n", o.rounds)
                << fmt::format("{:<15} {:>6} {:>7} {:>14} {:>10}\n", "method", "group", "groups",
                               "early releases", "time ms");
    for (const auto& m : methods) {
      StressOptions so;
      so.method = m;
      so.rounds = o.rounds;
      StressResult r;
      bool failed = false;
      std::string why = refused([&] { r = barrier_stress(device, so); }, failed);
      if (failed) {
        failures.push_back(why);
        out["stress"].push_back({{"method", m}, {"error", why}});
        if (text) std::cout << fmt::format("{:<15} FAILED: {}\n", m, why);
        continue;
      }
      if (!why.empty()) continue;
      ++runnable;
      all_correct = all_correct && r.passed();
      out["stress"].push_back({{"method", r.method},
                               {"group_size", r.group_size},
                               {"groups", r.groups},
                               {"rounds", r.rounds},
                               {"early_releases", r.early_releases},
                               {"barrier_failed", r.barrier_failed},
                               {"time_ms", r.time_ms}});
      if (text)
        std::cout << fmt::format("{:<15} {:>6} {:>7} {:>14} {:>10.3f}{}\n", r.method, r.group_size,
                                 r.groups, r.early_releases, r.time_ms,
                                 r.barrier_failed ? "  FAILED (spin timed out)" : "");
    }
  }

  if (o.common.json) std::cout << out.dump() << "\n";
  if (!failures.empty()) throw Error(ErrorKind::backend, failures.front());
  if (runnable == 0 && o.method != "all") {
    std::string why = "no group size fits the device";
    for (const char* part : {"stencil", "latency"})
      if (out.contains(part) && !out[part].empty() && out[part][0].contains("refused"))
        why = out[part][0]["refused"].get<std::string>();
    throw Error(ErrorKind::unsupported, why);
  }
  if (!all_correct) throw Error(ErrorKind::backend, "a barrier method gave a wrong result");
}

}  // namespace

void add_barrier_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "barrier", "the classic grid-barrier stencil, latency sweep and stress test per method");
  auto o = std::make_shared<BarrierOpts>();
  cmd->add_option("--method", o->method,
                  "a method (see `parpat list barrier`), a comma-separated list of them, or all");
  cmd->add_option("--steps", o->steps, "stencil steps (default 500000)");
  cmd->add_option("--work-items", o->work_items, "stencil work-items (default 2048)");
  cmd->add_option("--group-sizes", o->group_sizes, "stencil group sizes (default 1024 64 32)");
  cmd->add_option("--barriers", o->barriers, "barriers K per latency run (default 1000 on GPUs)");
  cmd->add_flag("--no-sweep{false}", o->sweep, "skip the latency sweep");
  cmd->add_flag("--no-stencil{false}", o->stencil, "skip the stencil");
  cmd->add_flag("--stress", o->stress, "also run the early-release stress test");
  cmd->add_option("--rounds", o->rounds, "stress test rounds (default 100000)");
  o->common.add_to(*cmd, false);
  cmd->callback([o] {
    if (o->steps < 0) throw_invalid("--steps must not be negative");
    if (o->rounds < 1) throw_invalid("--rounds must be positive");
    run_barrier(*o);
  });
}

}  // namespace parpat::cli
