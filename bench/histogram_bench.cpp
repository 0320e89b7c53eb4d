// `parpat bench histogram`: every variant of the device's backend over dtype × bins ×
// distribution (uniform, all-equal, normal) on 1 GiB inputs (64 MiB on the CPU; less with
// --quick), each verified exactly and timed beside CUB HistogramEven (CUDA) or numpy.histogram
// (CPU) on the same inputs. Rows note the temporary device memory of the plan and of CUB. Then the
// weighted histogram of float32 values and weights.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <utility>

#include "bench.hpp"
#include "cub_baselines.hpp"
#include "histogram/histogram_internal.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/histogramdd.hpp"
#include "parpat/registry.hpp"
#include "runtime/cpu/cpu_device.hpp"
#include "runtime/device_impl.hpp"

namespace parpat::bench {

namespace {

constexpr double kSingleRunMs = 200;

enum class Distribution { uniform, all_equal, normal };
const char* distribution_name(Distribution d) {
  return d == Distribution::uniform     ? "uniform"
         : d == Distribution::all_equal ? "all-equal"
                                        : "normal";
}

// Integer inputs take values in [low, low + modulus), the histogram's range: the whole uint8,
// uint16 and int16 ranges, [0, 2^20) for int32.
std::uint64_t modulus_of(DType t) {
  return t == DType::uint8 ? 256 : (t == DType::uint16 || t == DType::int16) ? 65536 : 1u << 20;
}
std::int64_t low_of(DType t) {
  return t == DType::int16 ? -32768 : 0;
}

// bench/numpy_baseline.py builds the same values: splitmix64 as in random_data, floats (float16
// and bfloat16 too) in [0, 1) and integers low_of + the stream modulo modulus_of; "normal" is the
// mean of four such streams (Irwin–Hall, seeds seed .. seed + 3), "all-equal" the middle of the
// range. Value k of a stream depends on k alone (splitmix64 adds a constant to its state), so the
// host's threads fill sections of the input side by side: 2^29 float16 values, whose five
// roundings each are done in software, took the GPU benches most of their time on one thread.
std::vector<unsigned char> make_input(Device& host_cpu, DType t, std::int64_t n, std::uint64_t seed,
                                      Distribution dist) {
  std::vector<unsigned char> out(static_cast<std::size_t>(n) * dtype_size(t));
  const std::uint64_t mod = modulus_of(t);
  const std::int64_t low = low_of(t);
  constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;
  // Value k of the stream of seed s: splitmix64 from state s·γ + 1, as random_data.
  auto stream_at = [](std::uint64_t s, std::uint64_t k) {
    std::uint64_t z = s * kGamma + 1 + (k + 1) * kGamma;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(out.data());
    // A float's value, or an integer's distance above `low`.
    auto value = [&](std::uint64_t z) -> double {
      if constexpr (is_float_type<T>) {
        return static_cast<double>(static_cast<T>((z >> 11) * 0x1.0p-53));
      } else {
        return static_cast<double>(z % mod);
      }
    };
    auto integer = [&](std::uint64_t above) {
      return static_cast<T>(low + static_cast<std::int64_t>(above));
    };
    auto fill = [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const auto k = static_cast<std::uint64_t>(i);
        if (dist == Distribution::all_equal) {
          p[i] = is_float_type<T> ? static_cast<T>(0.5) : integer(mod / 2);
        } else if (dist == Distribution::uniform) {
          if constexpr (is_float_type<T>) {
            p[i] = static_cast<T>(value(stream_at(seed, k)));
          } else {
            p[i] = integer(stream_at(seed, k) % mod);
          }
        } else {
          double sum = value(stream_at(seed, k)) + value(stream_at(seed + 1, k)) +
                       value(stream_at(seed + 2, k)) + value(stream_at(seed + 3, k));
          if constexpr (is_float_type<T>) {
            p[i] = static_cast<T>(sum / 4);
          } else {
            p[i] = integer(static_cast<std::uint64_t>(sum) / 4);
          }
        }
      }
    };
    constexpr std::int64_t kSection = std::int64_t{1} << 20;
    detail::backend_cast<detail::CpuDevice>(host_cpu).parallel_for(
        (n + kSection - 1) / kSection,
        [&](std::int64_t s) { fill(s * kSection, std::min(n, (s + 1) * kSection)); });
  });
  return out;
}

std::string size_label(std::int64_t n) {
  int log = 0;
  while ((std::int64_t{1} << log) < n)
    ++log;
  return (std::int64_t{1} << log) == n ? fmt::format("2^{}", log) : std::to_string(n);
}

std::string bytes_label(std::size_t b) {
  if (b >= (1u << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

// Whether the sweep times variant v on `device`: of its backend, among --variant when given, and
// not the one-value-at-a-time reference on more than 2^24 values.
bool timed_variant(const VariantInfo& v, const Device& device, const BenchOptions& o,
                   std::int64_t n) {
  if (v.backend != backend_name(device.backend())) return false;
  if (!o.variants.empty() &&
      std::find(o.variants.begin(), o.variants.end(), v.name) == o.variants.end())
    return false;
  return !(v.name == "serial" && n > (1 << 24));
}

// The row of variant v on a case, before it is timed.
BenchRow case_row(const Device& device, const VariantInfo& v, DType t, std::string op,
                  std::string shape) {
  BenchRow row;
  row.pattern = "histogram";
  row.backend = v.backend;
  row.device = device.info().name;
  row.variant = v.name;
  row.dtype = dtype_name(t);
  row.op = std::move(op);
  row.shape = std::move(shape);
  return row;
}

// Adds a timed row of the weighted or joint sweeps, with its rate and share of the read peak,
// and prints it.
void add_row(BenchRow row, const BenchOptions& o, const Peaks& peaks, std::vector<BenchRow>& rows) {
  row.gbps = row.time_ms > 0 ? row.bytes / (row.time_ms * 1e6) : 0;
  row.pct_peak = peaks.read_gbps > 0 ? 100.0 * row.gbps / peaks.read_gbps : 0;
  std::cerr << fmt::format("  histogram {:<13} {:<8} {:<26} {:<18} {:10.2f} µs {}\n", row.variant,
                           row.dtype, row.op, row.shape, row.time_ms * 1e3,
                           row.verified ? "" : "NOT VERIFIED " + row.note);
  if (o.on_row) o.on_row(row);
  rows.push_back(std::move(row));
}

// Times numpy on `cases` (bench/numpy_baseline.py) and puts each time beside its row.
void add_numpy_baselines(const std::vector<nlohmann::json>& cases,
                         const std::vector<std::size_t>& row_of_case, std::vector<BenchRow>& rows) {
  const auto times = numpy_times("histogram", cases);
  for (std::size_t k = 0; k < times.size() && k < row_of_case.size(); ++k) {
    if (times[k] <= 0) continue;
    rows[row_of_case[k]].baseline = "numpy";
    rows[row_of_case[k]].baseline_ms = times[k];
  }
}

// Weighted histograms (numpy.histogram's weights=): float32 values and float32 weights over 256,
// 1024 and 65536 even bins, every variant that takes weights, verified against the CPU
// `parallel` sums within the bound of float64 addition in any order (k·2^-52 of the sum of the k
// weights' magnitudes, twice: both sides round). No vendor library has weights: CuPy's
// cupy.histogram(weights=) is timed beside parpat by `python -m parpat.bench`.
void bench_weighted(const Device& device, const BenchOptions& o, const Peaks& peaks, bool gpu,
                    std::vector<BenchRow>& rows) {
  const DType t = DType::float32;
  const std::int64_t n = gpu ? (o.quick ? 1 << 24 : 1 << 27) : (o.quick ? 1 << 21 : 1 << 24);
  Device host_cpu = Device::open(Backend::cpu);
  const bool cpu = device.backend() == Backend::cpu;
  std::vector<nlohmann::json> numpy_cases;  // the CPU's rows: numpy.histogram(weights=) beside
  std::vector<std::size_t> numpy_rows;
  const auto values_host = make_input(host_cpu, t, n, 101, Distribution::uniform);
  const auto weights_host = make_input(host_cpu, t, n, 202, Distribution::uniform);
  Array values = Array::from_host(device, t, {n}, values_host.data());
  Array weights = Array::from_host(device, t, {n}, weights_host.data());
  Array values_cpu = Array::from_host(host_cpu, t, {n}, values_host.data());
  Array weights_cpu = Array::from_host(host_cpu, t, {n}, weights_host.data());
  for (std::int64_t bins : {256, 1024, 65536}) {
    const HistogramBins spec = HistogramBins::even(bins, 0.0, 1.0);
    // The weights are in [0, 1): the sums are their own magnitudes.
    const HistogramResult expected = histogram(values_cpu, weights_cpu, spec, {"parallel"});
    const HistogramResult counts = histogram(values_cpu, spec, {"parallel"});
    for (const auto& v : list_variants("histogram")) {
      if (!timed_variant(v, device, o, n) ||
          !detail::find_histogram_variant(device.backend(), v.name).make_weighted)
        continue;
      BenchRow row = case_row(device, v, t, "uniform, float32 weights",
                              fmt::format("{} bins, {}", bins, size_label(n)));
      try {
        Histogrammer plan(device, t, t, n, spec, {v.name});
        Buffer sums(device, static_cast<std::size_t>(plan.slots()) * 8);
        plan.run(values, weights, sums);
        std::vector<double> got(static_cast<std::size_t>(plan.slots()));
        sums.download(got.data(), got.size() * 8);
        row.verified = true;
        for (std::int64_t b = 0; b < bins && row.verified; ++b) {
          const double want = expected.sums[static_cast<std::size_t>(b)];
          const double bound = 2.0 *
                               static_cast<double>(counts.counts[static_cast<std::size_t>(b)]) *
                               0x1p-52 * want;
          if (!(std::fabs(got[static_cast<std::size_t>(b)] - want) <= bound)) {
            row.verified = false;
            row.note =
                fmt::format("bin {}: {} instead of {}", b, got[static_cast<std::size_t>(b)], want);
          }
        }
        row.time_ms = median_time_ms(
            device, [&](int) { plan.run(values, weights, sums); }, o.reps);
        if (row.verified) row.note = "temp " + bytes_label(plan.temp_bytes());
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::unsupported) continue;
        row.note = e.what();
      }
      row.bytes = 2.0 * static_cast<double>(n) * 4 + static_cast<double>(bins) * 8;
      if (cpu) {
        numpy_cases.push_back({{"kind", "weighted"}, {"n", n}, {"seed", 101}, {"bins", bins}});
        numpy_rows.push_back(rows.size());
      }
      add_row(std::move(row), o, peaks, rows);
    }
  }
  add_numpy_baselines(numpy_cases, numpy_rows, rows);
}

// Joint histograms (numpy.histogram2d): float32 (x, y) pairs, uniform over the range, as one
// (N, 2) array and as two arrays, 64 × 64, 256 × 256 and 1024 × 1024 bins, verified exactly
// against the CPU `parallel` counts. Device time of the counting (HistogramOptions::timed), the
// median of o.reps calls. No vendor library has a joint histogram (CUB's multi-channel histogram
// counts each channel alone): cupy.histogram2d is timed beside parpat by `python -m parpat.bench`.
void bench_joint(const Device& device, const BenchOptions& o, const Peaks& peaks, bool gpu,
                 std::vector<BenchRow>& rows) {
  const DType t = DType::float32;
  const std::int64_t n = gpu ? (o.quick ? 1 << 24 : 1 << 27) : (o.quick ? 1 << 21 : 1 << 24);
  Device host_cpu = Device::open(Backend::cpu);
  const bool cpu = device.backend() == Backend::cpu;
  std::vector<nlohmann::json> numpy_cases;  // the CPU's rows: numpy.histogram2d beside
  std::vector<std::size_t> numpy_rows;
  const auto pairs = make_input(host_cpu, t, 2 * n, 303, Distribution::uniform);
  std::vector<unsigned char> xs(static_cast<std::size_t>(n) * 4), ys(xs.size());
  for (std::int64_t i = 0; i < n; ++i) {
    std::memcpy(xs.data() + i * 4, pairs.data() + i * 8, 4);
    std::memcpy(ys.data() + i * 4, pairs.data() + i * 8 + 4, 4);
  }
  const Array table = Array::from_host(device, t, {n, 2}, pairs.data());
  const std::vector<Array> columns{Array::from_host(device, t, {n}, xs.data()),
                                   Array::from_host(device, t, {n}, ys.data())};
  const Array on_cpu = Array::from_host(host_cpu, t, {n, 2}, pairs.data());
  const std::string variant = device.backend() == Backend::cpu ? "parallel" : "fast";
  if (!o.variants.empty() &&
      std::find(o.variants.begin(), o.variants.end(), variant) == o.variants.end())
    return;
  for (std::int64_t bins : {64, 256, 1024}) {
    const std::vector<HistogramBins> spec{HistogramBins::even(bins, 0.0, 1.0)};
    const HistogramDDResult expected = histogramdd(on_cpu, spec, {"parallel"});
    for (bool interleaved : {true, false}) {
      BenchRow row;
      row.pattern = "histogram";
      row.backend = backend_name(device.backend());
      row.device = device.info().name;
      row.variant = variant;
      row.dtype = dtype_name(t);
      row.op = interleaved ? "2-D uniform, (N, 2)" : "2-D uniform, 2 arrays";
      row.shape = fmt::format("{}x{} bins, {} pairs", bins, bins, size_label(n));
      HistogramOptions options{variant, true};
      auto run = [&] {
        return interleaved ? histogramdd(table, spec, options)
                           : histogramdd(columns, spec, options);
      };
      try {
        const HistogramDDResult got = run();
        row.verified = got.counts == expected.counts && got.outside == expected.outside;
        if (!row.verified) row.note = "counts differ from the CPU's";
        std::vector<double> times;
        for (int rep = 0; rep < std::max(o.reps, 1); ++rep)
          times.push_back(run().time_ms);
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        row.time_ms = times[times.size() / 2];
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::unsupported) continue;
        row.note = e.what();
      }
      row.bytes = static_cast<double>(n) * 8 + static_cast<double>(bins * bins) * 8;
      if (cpu) {
        numpy_cases.push_back({{"kind", "joint"}, {"n", n}, {"seed", 303}, {"bins", bins}});
        numpy_rows.push_back(rows.size());
      }
      add_row(std::move(row), o, peaks, rows);
    }
  }
  add_numpy_baselines(numpy_cases, numpy_rows, rows);
}

}  // namespace

std::vector<BenchRow> bench_histogram(const Device& device, const BenchOptions& o,
                                      const Peaks& peaks) {
  const bool cpu = device.backend() == Backend::cpu;
  const bool gpu = !cpu && device.info().independent_groups;
  const bool cuda = device.backend() == Backend::cuda;
  std::vector<DType> dtypes = o.quick
                                  ? std::vector<DType>{DType::uint8, DType::float32}
                                  : std::vector<DType>{DType::uint8, DType::uint16, DType::int32,
                                                       DType::float32, DType::float64};
  std::vector<std::int64_t> bin_counts =
      o.quick ? std::vector<std::int64_t>{7, 256, 1024, 65536}
              : std::vector<std::int64_t>{7, 256, 1024, 4096, 65536, 1 << 20};
  if (!o.dtypes.empty()) {
    dtypes.clear();
    for (const auto& name : o.dtypes)
      dtypes.push_back(parse_dtype(name));
  }
  if (!o.bins.empty()) bin_counts = o.bins;
  const Distribution dists[] = {Distribution::uniform, Distribution::all_equal,
                                Distribution::normal};
  std::size_t input_bytes = gpu ? (o.quick ? 1u << 26 : 1u << 30) : (o.quick ? 1u << 23 : 1u << 26);
  Device host_cpu = Device::open(Backend::cpu);

  std::vector<BenchRow> rows;
  std::vector<nlohmann::json> numpy_cases;
  std::vector<std::size_t> numpy_rows;
  std::uint64_t seed = 11;
  for (DType t : dtypes) {
    std::vector<std::int64_t> sizes = o.sizes;
    if (sizes.empty()) sizes = {static_cast<std::int64_t>(input_bytes / dtype_size(t))};
    for (std::int64_t n : sizes)
      for (Distribution dist : dists) {
        seed += 4;
        auto host = make_input(host_cpu, t, n, seed, dist);
        const std::size_t bytes = host.size();
        std::vector<Array> inputs;
        int copies = rotation_count(device.info(), bytes);
        for (int k = 0; k < copies; ++k)
          inputs.push_back(Array::from_host(device, t, {n}, host.data()));
        Array on_cpu = Array::from_host(host_cpu, t, {n}, host.data());
        const double lo = is_float(t) ? 0.0 : static_cast<double>(low_of(t));
        const double hi = is_float(t) ? 1.0 : lo + static_cast<double>(modulus_of(t));
        for (std::int64_t bins : bin_counts) {
          HistogramBins spec = HistogramBins::even(bins, lo, hi);
          // Expected counts: the reference up to 2^24 values, else the CPU `parallel` variant
          // (which the tests hold exactly to the reference).
          std::vector<std::uint64_t> expected(static_cast<std::size_t>(bins + 3));
          {
            Histogrammer plan(host_cpu, t, n, spec, {n <= (1 << 24) ? "serial" : "parallel"});
            Buffer counts(host_cpu, expected.size() * 8);
            plan.run(on_cpu, counts);
            counts.download(expected.data(), expected.size() * 8);
          }
          std::size_t cub_temp = 0;
          double cub_ms =
              cuda ? cub_histogram_even_ms(device, t, bins, lo, hi, inputs, o.reps, cub_temp) : 0;
          for (const auto& v : list_variants("histogram")) {
            if (!timed_variant(v, device, o, n)) continue;
            BenchRow row = case_row(device, v, t, distribution_name(dist),
                                    fmt::format("{} bins, {}", bins, size_label(n)));
            try {
              Histogrammer plan(device, t, n, spec, {v.name});
              Buffer counts(device, expected.size() * 8);
              device.impl().timer_start();
              plan.run(inputs[0], counts);
              const double first_ms = device.impl().timer_stop_ms();
              std::vector<std::uint64_t> got(expected.size());
              counts.download(got.data(), got.size() * 8);
              row.verified = got == expected;
              if (!row.verified) {
                auto bad = std::mismatch(got.begin(), got.end(), expected.begin());
                row.note = fmt::format("slot {}: {} instead of {}", bad.first - got.begin(),
                                       *bad.first, *bad.second);
              }
              // Pathological cases (global atomics on one address) take seconds per run: one
              // timed run says enough and keeps the sweep bounded.
              const bool single = first_ms > kSingleRunMs;
              row.time_ms =
                  single ? first_ms
                         : median_time_ms(
                               device, [&](int rep) { plan.run(inputs[rep % copies], counts); },
                               o.reps);
              if (row.verified) {
                row.note = "temp " + bytes_label(plan.temp_bytes());
                if (cuda) row.note += "; cub temp " + bytes_label(cub_temp);
                if (single) row.note += fmt::format("; one run (over {} ms)", kSingleRunMs);
              }
            } catch (const Error& e) {
              if (e.kind() == ErrorKind::unsupported) continue;  // beyond the variant's limits
              row.note = e.what();
            }
            row.bytes = static_cast<double>(bytes) + static_cast<double>(bins) * 8;
            row.gbps = row.time_ms > 0 ? row.bytes / (row.time_ms * 1e6) : 0;
            row.pct_peak = peaks.read_gbps > 0 ? 100.0 * row.gbps / peaks.read_gbps : 0;
            if (cub_ms > 0) {
              row.baseline = "cub";
              row.baseline_ms = cub_ms;
            }
            if (cpu) {
              numpy_cases.push_back({{"dtype", row.dtype},
                                     {"n", n},
                                     {"seed", seed},
                                     {"dist", row.op},
                                     {"mod", modulus_of(t)},
                                     {"low", low_of(t)},
                                     {"bins", bins},
                                     {"range", {lo, hi}},
                                     {"reps", 5},
                                     {"copies", copies}});
              numpy_rows.push_back(rows.size());
            }
            rows.push_back(row);
            if (o.on_row) o.on_row(row);
            std::cerr << fmt::format("  histogram {:<13} {:<8} {:<9} {:<22} {:10.2f} µs {}\n",
                                     row.variant, row.dtype, row.op, row.shape, row.time_ms * 1e3,
                                     row.verified ? "" : "NOT VERIFIED " + row.note);
          }
        }
      }
  }
  add_numpy_baselines(numpy_cases, numpy_rows, rows);
  if (o.dtypes.empty() ||
      std::find(o.dtypes.begin(), o.dtypes.end(), "float32") != o.dtypes.end()) {
    bench_weighted(device, o, peaks, gpu, rows);
    bench_joint(device, o, peaks, gpu, rows);
  }
  return rows;
}

}  // namespace parpat::bench
