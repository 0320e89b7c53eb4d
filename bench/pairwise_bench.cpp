// `parpat bench pairwise`: every variant of the device's backend × kernel (brute-force product,
// gaussian, and the product shortcut A[x]·ΣB) × threads per block, at X = 2^20, Y = 2^14 and a
// small case on GPUs (smaller on CPUs). Product rows report GFLOPS (2·X·Y per run) and the % of
// the measured FP32 FMA peak; gaussian rows report pairs per second. Each plan is checked against
// the float64 reference on a sample of x first. The work is compute-bound (A and B stay in L2),
// so inputs are not rotated.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iostream>

#include "bench.hpp"
#include "pairwise/pairwise_internal.hpp"
#include "parpat/error.hpp"
#include "parpat/pairwise.hpp"
#include "parpat/registry.hpp"

namespace parpat::bench {

namespace {

std::string pow2_label(std::int64_t n) {
  int log = 0;
  while ((std::int64_t{1} << log) < n)
    ++log;
  return (std::int64_t{1} << log) == n ? fmt::format("2^{}", log) : std::to_string(n);
}

struct Case {
  std::int64_t x, y;
};

struct KernelCase {
  const char* label;
  PairwiseKernel kernel;
  bool brute_force;
};

constexpr double kH = 0.5;
constexpr int kSample = 256;  // x checked against the reference per plan

std::vector<float> uniform(std::int64_t n, std::uint64_t seed) {
  auto raw = random_data(DType::float32, n, seed);
  std::vector<float> v(static_cast<std::size_t>(n));
  std::memcpy(v.data(), raw.data(), raw.size());
  for (auto& x : v)
    x = 2.0f * x - 1.0f;  // [−1, 1), the contract's range
  return v;
}

}  // namespace

std::vector<BenchRow> bench_pairwise(const Device& device, const BenchOptions& o,
                                     const Peaks& peaks) {
  const bool gpu = device.backend() != Backend::cpu && device.info().independent_groups;
  std::vector<Case> cases;
  if (!o.sizes.empty()) {
    for (auto x : o.sizes)
      cases.push_back({x, gpu ? std::int64_t{1} << 14 : std::int64_t{1} << 12});
  } else if (gpu) {
    cases = o.quick ? std::vector<Case>{{1 << 18, 1 << 12}}
                    : std::vector<Case>{{1 << 20, 1 << 14}, {1 << 14, 1 << 12}};
  } else {
    cases = o.quick ? std::vector<Case>{{1 << 12, 1 << 10}}
                    : std::vector<Case>{{1 << 14, 1 << 12}, {1 << 10, 1 << 10}};
  }
  std::vector<int> block_sizes = {0};
  if (gpu && !o.quick) {
    block_sizes = {64, 128, 256, 512, 1024};
    block_sizes.erase(std::remove_if(block_sizes.begin(), block_sizes.end(),
                                     [&](int b) { return b > device.info().max_group_size; }),
                      block_sizes.end());
  }
  const KernelCase kernels[] = {{"product", PairwiseKernel::product, true},
                                {"gaussian", PairwiseKernel::gaussian, false},
                                {"product a·ΣB", PairwiseKernel::product, false}};
  std::vector<BenchRow> rows;
  std::uint64_t seed = 100;
  for (const Case& c : cases) {
    auto a = uniform(c.x, ++seed), b = uniform(c.y, ++seed);
    Array av = Array::from_vector(device, a), bv = Array::from_vector(device, b);
    Array cv(device, DType::float32, {c.x});
    // The reference on x spread over all of A.
    std::vector<std::int64_t> sample;
    for (int k = 0; k < kSample && k < c.x; ++k)
      sample.push_back(std::min(c.x - 1, k * c.x / std::min<std::int64_t>(kSample, c.x) + k % 7));
    std::vector<float> sample_a;
    for (auto i : sample)
      sample_a.push_back(a[static_cast<std::size_t>(i)]);
    for (const KernelCase& k : kernels) {
      detail::PairwiseProblem p;
      p.x = static_cast<std::int64_t>(sample.size());
      p.y = c.y;
      p.kernel = k.kernel;
      p.h = static_cast<float>(kH);
      std::vector<double> expected(sample.size()), magnitude(sample.size());
      detail::pairwise_reference(sample_a.data(), b.data(), p, expected.data());
      detail::pairwise_magnitude(sample_a.data(), b.data(), p, magnitude.data());
      for (const auto& v : list_variants("pairwise")) {
        if (v.backend != backend_name(device.backend())) continue;
        if (!o.variants.empty() &&
            std::find(o.variants.begin(), o.variants.end(), v.name) == o.variants.end())
          continue;
        if (v.name == "serial" && (c.x * c.y > (std::int64_t{1} << 24) || !k.brute_force))
          continue;  // the float64 reference loop: one small brute-force case is enough
        // The shortcut does not depend on the block size of the all-pairs kernels.
        std::vector<int> sweep = k.brute_force || k.kernel != PairwiseKernel::product
                                     ? block_sizes
                                     : std::vector<int>{0};
        for (int tpb : sweep) {
          BenchRow row;
          row.pattern = "pairwise";
          row.backend = v.backend;
          row.device = device.info().name;
          row.variant = v.name;
          row.dtype = "float32";
          row.op = k.label;
          try {
            PairwiseOptions options{k.kernel, kH, "", v.name, k.brute_force, tpb};
            Pairwise plan(device, c.x, c.y, options);
            row.shape = fmt::format("{}×{}{}", pow2_label(c.x), pow2_label(c.y),
                                    plan.threads_per_block() && sweep.front() != 0
                                        ? fmt::format(" tpb={}", plan.threads_per_block())
                                        : "");
            plan.run(av, bv, cv);
            std::vector<float> got_all = cv.to_vector<float>(), got;
            for (auto i : sample)
              got.push_back(got_all[static_cast<std::size_t>(i)]);
            double err = detail::pairwise_max_relative_error(got, expected, magnitude);
            row.verified = err <= 1e-4;
            if (!row.verified) row.note = fmt::format("max relative error {:.3g}", err);
            row.time_ms = median_time_ms(
                device, [&](int) { plan.run(av, bv, cv); }, o.reps);
          } catch (const Error& e) {
            // A block size the compiled kernel cannot hold is a limit of the device, not a
            // failed result: name it and move on.
            if (e.kind() == ErrorKind::invalid_argument && tpb != 0 && row.shape.empty()) {
              std::cerr << "  pairwise " << v.name << " " << k.label << " tpb=" << tpb
                        << " skipped: " << e.what() << "\n";
              continue;
            }
            row.note = e.what();
            if (row.shape.empty())
              row.shape = fmt::format("{}×{} tpb={}", pow2_label(c.x), pow2_label(c.y), tpb);
          }
          double pairs = static_cast<double>(c.x) * static_cast<double>(c.y);
          if (row.time_ms > 0) {
            // Product: GFLOPS of the all-pairs work (the shortcut does less, but this is the
            // rate it delivers); gaussian: billions of pairs per second.
            row.gbps =
                (k.kernel == PairwiseKernel::product ? 2 * pairs : pairs) / (row.time_ms * 1e6);
            if (k.brute_force && peaks.fma_gflops > 0)
              row.pct_peak = 100.0 * row.gbps / peaks.fma_gflops;
          }
          row.bytes = pairs;
          rows.push_back(row);
          if (o.on_row) o.on_row(row);
          std::cerr << fmt::format("  pairwise {:<10} {:<13} {:<22} {:11.2f} µs {:10.1f} {} {}\n",
                                   row.variant, row.op, row.shape, row.time_ms * 1e3, row.gbps,
                                   k.kernel == PairwiseKernel::product ? "GFLOPS" : "Gpairs/s",
                                   row.verified ? "" : "NOT VERIFIED " + row.note);
        }
      }
    }
  }
  return rows;
}

std::string pairwise_markdown_table(const std::vector<BenchRow>& rows) {
  std::string out =
      "| variant | kernel | X×Y | time (µs) | GFLOPS | pairs/s | % of FMA peak | verified |\n"
      "|---|---|---|---:|---:|---:|---:|---|\n";
  for (const auto& r : rows) {
    bool product = r.op.rfind("product", 0) == 0;
    double pairs_per_s = r.time_ms > 0 ? r.bytes / (r.time_ms * 1e-3) : 0;
    out += fmt::format("| {} | {} | {} | {:.2f} | {} | {:.3g} | {} | {} |\n", r.variant, r.op,
                       r.shape, r.time_ms * 1e3, product ? fmt::format("{:.1f}", r.gbps) : "—",
                       pairs_per_s, r.pct_peak > 0 ? fmt::format("{:.1f}", r.pct_peak) : "—",
                       r.verified ? "yes" : "NO" + (r.note.empty() ? "" : " (" + r.note + ")"));
  }
  return out;
}

}  // namespace parpat::bench
