#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bench.hpp"
#include "cub_baselines.hpp"
#include "runtime/device_impl.hpp"

namespace parpat::bench {

nlohmann::json to_json(const BenchRow& r) {
  nlohmann::json j = {{"pattern", r.pattern}, {"backend", r.backend},   {"device", r.device},
                      {"variant", r.variant}, {"dtype", r.dtype},       {"op", r.op},
                      {"shape", r.shape},     {"time_ms", r.time_ms},   {"bytes", r.bytes},
                      {"gbps", r.gbps},       {"pct_peak", r.pct_peak}, {"verified", r.verified}};
  if (r.baseline_ms > 0) {
    j["baseline"] = r.baseline;
    j["baseline_ms"] = r.baseline_ms;
    j["speedup"] = r.baseline_ms / r.time_ms;
  }
  if (!r.note.empty()) j["note"] = r.note;
  if (!r.timing.empty()) j["timing"] = r.timing;
  return j;
}

std::string markdown_table(const std::vector<BenchRow>& rows) {
  // A timing column only when some row was not timed one launch at a time.
  bool graphs = std::any_of(rows.begin(), rows.end(),
                            [](const BenchRow& r) { return r.timing.rfind("graph", 0) == 0; });
  std::string out =
      "| variant | dtype | op | shape | time (µs) | GB/s | % of peak | baseline (µs) | speed-up | "
      "verified |" +
      std::string(graphs ? " timing |" : "") + "\n|---|---|---|---|---:|---:|---:|---:|---:|---|" +
      (graphs ? "---|" : "") + "\n";
  for (const auto& r : rows) {
    std::string base =
        r.baseline_ms > 0 ? fmt::format("{} {:.2f}", r.baseline, r.baseline_ms * 1e3) : "—";
    std::string speed = r.baseline_ms > 0 ? fmt::format("{:.2f}×", r.baseline_ms / r.time_ms) : "—";
    out += fmt::format("| {} | {} | {} | {} | {:.2f} | {:.1f} | {:.1f} | {} | {} | {} |", r.variant,
                       r.dtype, r.op, r.shape, r.time_ms * 1e3, r.gbps, r.pct_peak, base, speed,
                       r.verified ? "yes" : "NO" + (r.note.empty() ? "" : " (" + r.note + ")"));
    out += graphs ? fmt::format(" {} |\n", r.timing.empty() ? "launch" : r.timing) : "\n";
  }
  if (graphs)
    out +=
        "\ntiming: launch = one launch between device events, held behind a blocking kernel; "
        "graph×K = K launches captured into one CUDA graph, replay time / K (the variant and "
        "its baseline always by the same method)\n";
  return out;
}

double median_time_ms(const Device& device, const std::function<void(int)>& run, int reps,
                      int warmup) {
  for (int i = 0; i < warmup; ++i)
    run(i);
  device.synchronize();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    device.impl().timer_start();
    run(warmup + i);
    times.push_back(device.impl().timer_stop_ms());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double median_graph_time_ms(const Device& device, const std::function<void(int)>& run, int reps,
                            int launches, int warmup) {
  auto& impl = device.impl();
  for (int i = 0; i < warmup; ++i)
    run(i);
  device.synchronize();
  if (!impl.capture_begin()) return 0;
  try {
    for (int k = 0; k < launches; ++k)
      run(warmup + k);
  } catch (...) {
    try {
      impl.capture_end();  // leave the queue out of capture mode; its own error is secondary
    } catch (...) {
    }
    throw;
  }
  impl.capture_end();
  impl.replay();  // untimed: the first replay may still pay for setting the graph up
  device.synchronize();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    impl.timer_start();
    impl.replay();
    times.push_back(impl.timer_stop_ms() / launches);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double CaseTimer::time_ms(const std::function<void(int)>& run) {
  int reps = options_.reps, launches = std::max(options_.graph_launches, 1);
  if (method_ == Method::launch) return median_time_ms(device_, run, reps);
  if (method_ == Method::graph) return median_graph_time_ms(device_, run, reps, launches);
  double single = 0;
  if (options_.timing != "graph") {
    single = median_time_ms(device_, run, reps);
    if (options_.timing == "launch" || single * 1e3 >= options_.graph_below_us) {
      method_ = Method::launch;
      return single;
    }
  }
  double replayed = median_graph_time_ms(device_, run, reps, launches);
  if (replayed > 0) {
    method_ = Method::graph;
    return replayed;
  }
  method_ = Method::launch;  // the backend has no graphs
  return single > 0 ? single : median_time_ms(device_, run, reps);
}

std::string CaseTimer::method() const {
  switch (method_) {
    case Method::launch:
      return "launch";
    case Method::graph:
      return fmt::format("graph×{}", std::max(options_.graph_launches, 1));
    case Method::undecided:
      break;
  }
  return {};
}

int rotation_count(const DeviceInfo& info, std::size_t bytes_per_input) {
  std::size_t cache = info.l2_cache ? info.l2_cache : (32u << 20);
  std::size_t want = (4 * cache + bytes_per_input - 1) / std::max<std::size_t>(bytes_per_input, 1);
  return static_cast<int>(std::clamp<std::size_t>(want, 1, 64));
}

std::vector<unsigned char> random_data(DType dtype, std::int64_t n, std::uint64_t seed) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(dtype));
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&state] {  // splitmix64
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  visit_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    T* p = reinterpret_cast<T*>(out.data());
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>((next() >> 11) * 0x1.0p-53);
      } else {
        p[i] = static_cast<T>(next() % 100);
      }
    }
  });
  return out;
}

namespace {

std::string numpy_script() {
  if (const char* env = std::getenv("PARPAT_NUMPY_SCRIPT")) return env;
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::vector<std::string> candidates;
  if (len > 0) {
    std::string dir(exe, static_cast<std::size_t>(len));
    dir = dir.substr(0, dir.rfind('/'));
    candidates = {dir + "/../bench/numpy_baseline.py", dir + "/../../bench/numpy_baseline.py"};
  }
  candidates.push_back(PARPAT_SOURCE_DIR "/bench/numpy_baseline.py");
  for (auto& c : candidates)
    if (std::ifstream(c)) return c;
  return {};
}

}  // namespace

std::vector<double> numpy_times(const std::string& pattern,
                                const std::vector<nlohmann::json>& cases) {
  std::string script = numpy_script();
  if (script.empty() || cases.empty()) return {};
  char tmpl[] = "/tmp/parpat-numpy-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return {};
  close(fd);
  { std::ofstream(tmpl) << nlohmann::json{{"pattern", pattern}, {"cases", cases}}.dump(); }
  // The python on PATH may lack numpy where the system's has it (Debian's python3-numpy).
  const std::string errors = std::string(tmpl) + ".err";
  std::string cmd = "{ python3 -c 'import numpy' 2>/dev/null && python3 '" + script + "' '" + tmpl +
                    "' || /usr/bin/python3 '" + script + "' '" + tmpl + "'; } 2>'" + errors + "'";
  std::string output;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    while (fgets(buf.data(), buf.size(), pipe))
      output += buf.data();
    pclose(pipe);
  }
  std::remove(tmpl);
  {  // numpy's complaints (a case it refused), one line each, beside the bench's own lines
    std::ifstream in(errors);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("numpy baseline: ", 0) == 0) std::fprintf(stderr, "  %s\n", line.c_str());
  }
  std::remove(errors.c_str());
  try {
    const nlohmann::json j = nlohmann::json::parse(output);
    std::vector<double> times;
    for (const auto& t : j.at("times_ms"))
      times.push_back(t.is_number() ? t.get<double>() : 0.0);  // null: a dtype numpy lacks
    return times;
  } catch (const std::exception&) {
    return {};
  }
}

#ifndef PARPAT_HAVE_CUDA
bool cub_available() {
  return false;
}
double cub_reduce_ms(const Device&, DType, ReduceOp, const std::vector<Array>&, CaseTimer&) {
  return 0;
}
double cub_segmented_reduce_ms(const Device&, DType, ReduceOp, const Array&, CaseTimer&) {
  return 0;
}
double cub_histogram_even_ms(const Device&, DType, std::int64_t, double, double,
                             const std::vector<Array>&, int, std::size_t& temp_bytes) {
  temp_bytes = 0;
  return 0;
}
#endif

}  // namespace parpat::bench
