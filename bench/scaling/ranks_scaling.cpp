// ranks_scaling: resident data over the devices of one host, one thread rank per device
// (parpat/distributed.hpp's reduce, histogram and pairwise of each rank's part), against the same
// problem on the first device alone, in one run. Each case times whole calls, collective included:
// every rank loops over the call, and rank 0's wall time per call (which ends after every rank's
// partials are combined) is taken, median of --repeat after a warm-up. The calls are the one-shot
// ones, which make their plans per call, as a user's call does.
//
//   ranks_scaling --devices cuda:0,cuda:1 [--elements N] [--repeat R] [--json OUT]
//
// With one GPU, --devices cuda:0,cuda:0 measures what the ranks cost, not scaling.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include "parpat/distributed.hpp"
#include "parpat/parpat.hpp"

namespace {

using parpat::Array;
using parpat::Communicator;
using parpat::Device;

// Uniform values in [−4, 4) from a 64-bit LCG, filled by every core.
std::vector<float> make_values(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::uint64_t s = 0x9E3779B97F4A7C15ull * (t + 1);
      for (std::int64_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[static_cast<std::size_t>(i)] = static_cast<float>((s >> 40) * 0x1p-24 * 8.0 - 4.0);
      }
    });
  for (auto& t : pool)
    t.join();
  return v;
}

// Median wall ms per call of `call(part, comm)` on each rank, over the first `ranks` devices.
double time_over_ranks(const std::vector<Array>& parts, int repeat,
                       const std::function<void(const Array&, Communicator&)>& call) {
  std::vector<double> ms;
  parpat::on_thread_ranks(static_cast<int>(parts.size()), [&](Communicator& comm) {
    for (int k = 0; k < 3 + repeat; ++k) {
      const auto start = std::chrono::steady_clock::now();
      call(parts[static_cast<std::size_t>(comm.rank())], comm);
      if (comm.rank() == 0 && k >= 3)
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
  });
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("resident reduce and histogram over the devices of this host, beside one device");
  std::string spec = "cuda:0,cuda:1", json_path;
  std::int64_t n = std::int64_t{1} << 31;
  int repeat = 20;
  app.add_option("--devices", spec, "the ranks' devices, one rank each");
  app.add_option("--elements", n, "float32 elements of the whole array (default 2^31)");
  app.add_option("--repeat", repeat, "timed calls per case (median)");
  app.add_option("--json", json_path, "write the rows here");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<Device> devices = parpat::open_devices(spec);
    const std::vector<float> host = make_values(n);
    struct Case {
      std::string name;
      std::function<void(const Array&, Communicator&)> call;
    };
    const std::vector<Case> cases = {
        {"sum float32",
         [](const Array& a, Communicator& c) {
           parpat::reduce(a, c, {parpat::ReduceOp::sum, parpat::Axis::all, {}});
         }},
        {"histogram float32, 1024 bins",
         [](const Array& a, Communicator& c) {
           parpat::histogram(a, c, parpat::HistogramBins::even(1024, -4, 4));
         }},
        {"histogram float32, 65536 bins", [](const Array& a, Communicator& c) {
           parpat::histogram(a, c, parpat::HistogramBins::even(65536, -4, 4));
         }}};
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t ranks : {std::size_t{1}, devices.size()}) {
      std::vector<Array> parts;
      for (std::size_t r = 0; r < ranks; ++r) {
        const std::int64_t first =
            n * static_cast<std::int64_t>(r) / static_cast<std::int64_t>(ranks);
        const std::int64_t last =
            n * static_cast<std::int64_t>(r + 1) / static_cast<std::int64_t>(ranks);
        parts.push_back(Array::from_host(devices[r], parpat::DType::float32, {last - first},
                                         host.data() + first));
      }
      for (const Case& c : cases) {
        const double ms = time_over_ranks(parts, repeat, c.call);
        const double gbps = static_cast<double>(n) * sizeof(float) / ms / 1e6;
        std::cout << fmt::format("{:32} {} rank(s) on {}: {:9.3f} ms, {:7.1f} GB/s\n", c.name,
                                 ranks, ranks == 1 ? devices[0].label() : spec, ms, gbps);
        rows.push_back({{"case", c.name},
                        {"ranks", ranks},
                        {"devices", ranks == 1 ? devices[0].label() : spec},
                        {"elements", n},
                        {"median_ms", ms},
                        {"gbps", gbps}});
      }
      // Pairwise, split x: each rank's part of A against all of B (2^21 × 2^15, gaussian), both
      // from the first values.
      const std::int64_t x = std::int64_t{1} << 21, y = std::int64_t{1} << 15;
      if (n < x) {
        if (ranks == devices.size()) break;
        continue;
      }
      std::vector<Array> a_parts, bs;
      for (std::size_t r = 0; r < ranks; ++r) {
        const auto first = x * static_cast<std::int64_t>(r) / static_cast<std::int64_t>(ranks);
        const auto last = x * static_cast<std::int64_t>(r + 1) / static_cast<std::int64_t>(ranks);
        a_parts.push_back(Array::from_host(devices[r], parpat::DType::float32, {last - first},
                                           host.data() + first));
        bs.push_back(Array::from_host(devices[r], parpat::DType::float32, {y}, host.data()));
      }
      parpat::PairwiseOptions gaussian;
      gaussian.kernel = parpat::PairwiseKernel::gaussian;
      const double ms = time_over_ranks(a_parts, repeat, [&](const Array& a, Communicator& c) {
        parpat::pairwise(a, bs[static_cast<std::size_t>(c.rank())], c, gaussian);
      });
      const double pairs = static_cast<double>(x) * static_cast<double>(y) / ms / 1e9;
      std::cout << fmt::format("{:32} {} rank(s) on {}: {:9.3f} ms, {:7.3f} Tpairs/s\n",
                               "pairwise gaussian 2^21 x 2^15", ranks,
                               ranks == 1 ? devices[0].label() : spec, ms, pairs);
      rows.push_back({{"case", "pairwise gaussian 2^21 x 2^15"},
                      {"ranks", ranks},
                      {"devices", ranks == 1 ? devices[0].label() : spec},
                      {"median_ms", ms},
                      {"tpairs_per_s", pairs}});
      if (ranks == devices.size()) break;
    }
    if (!json_path.empty()) std::ofstream(json_path) << rows.dump(1) << "\n";
  } catch (const parpat::Error& e) {
    std::cerr << "ranks_scaling: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
