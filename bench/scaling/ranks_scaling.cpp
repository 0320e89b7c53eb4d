// ranks_scaling: resident data over the devices of one host, one thread rank per device
// (parpat/distributed.hpp's reduce, histogram and pairwise of each rank's part), against the same
// problem on the first device alone (the plain one-device call), in one run. Each case times whole
// calls, collective included: every rank loops over the call, and rank 0's wall time per call
// (which ends after every rank's partials are combined) is taken, median of --repeat after a
// warm-up. Each case runs the one-shot calls, which make their plans per call and return new
// vectors, as a user's call does, and then plans made once (Reducer, Histogrammer, Pairwise on
// one device; RankReducer, RankHistogrammer, RankPairwise over the ranks), their results brought
// into host memory kept across calls (page-locked for pairwise's C). The ranks run over each engine
// there is: the threads' rendezvous, and NCCL when the devices are distinct CUDA devices; the
// all-reduce of a 65536-bin histogram's counts (uint64) is timed alone on each, from host memory
// and (NCCL) from device memory. Two rows isolate the costs: rank 0's part alone (the plain call on
// its share), and every part at once (each rank's plain call on its own device at the same time, no
// collective).
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
#include "runtime/device_impl.hpp"

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

using Comms = std::vector<std::shared_ptr<Communicator>>;

double median(std::vector<double> ms) {
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

// Median wall ms per call of `call(part, comm)` on each rank of `comms`.
double time_over_ranks(const Comms& comms, const std::vector<Array>& parts, int repeat,
                       const std::function<void(const Array&, Communicator&)>& call) {
  std::vector<double> ms;
  parpat::on_ranks(comms, [&](Communicator& comm) {
    for (int k = 0; k < 3 + repeat; ++k) {
      const auto start = std::chrono::steady_clock::now();
      call(parts[static_cast<std::size_t>(comm.rank())], comm);
      if (comm.rank() == 0 && k >= 3)
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
  });
  return median(ms);
}

// The same for plans: `make(part, comm)` makes each rank's plan once (untimed) and returns its
// run, which is timed.
double time_plans_over_ranks(
    const Comms& comms, const std::vector<Array>& parts, int repeat,
    const std::function<std::function<void()>(const Array&, Communicator&)>& make) {
  std::vector<double> ms;
  parpat::on_ranks(comms, [&](Communicator& comm) {
    const std::function<void()> run = make(parts[static_cast<std::size_t>(comm.rank())], comm);
    for (int k = 0; k < 3 + repeat; ++k) {
      const auto start = std::chrono::steady_clock::now();
      run();
      if (comm.rank() == 0 && k >= 3)
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
  });
  return median(ms);
}

// Median wall ms of `call()` on the host.
double time_alone(int repeat, const std::function<void()>& call) {
  std::vector<double> ms;
  for (int k = 0; k < 3 + repeat; ++k) {
    const auto start = std::chrono::steady_clock::now();
    call();
    if (k >= 3)
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
  }
  return median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("resident reduce, histogram and pairwise over the devices of this host, beside one");
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
    const std::size_t ranks = devices.size();
    const std::vector<float> host = make_values(n);
    const std::int64_t x = std::int64_t{1} << 21, y = std::int64_t{1} << 15;
    parpat::PairwiseOptions gaussian;
    gaussian.kernel = parpat::PairwiseKernel::gaussian;
    using Run = std::function<void()>;
    struct Case {
      std::string name;
      std::function<void(const Array&)> alone;  // the one-device call on the whole
      std::function<void(const Array&, Communicator&)> ranked;
      std::function<Run(const Array&)> plan_alone;  // the one-device plan: its run + download
      std::function<Run(const Array&, Communicator&)> plan_ranked;
    };
    const parpat::ReduceOptions sum{parpat::ReduceOp::sum, parpat::Axis::all, {}};
    const auto bins_1024 = parpat::HistogramBins::even(1024, -4, 4);
    const auto bins_65536 = parpat::HistogramBins::even(65536, -4, 4);
    // A one-device plan's run with its result downloaded, as a looping user's call is.
    auto reducer_run = [&](const Array& a) -> Run {
      auto plan = std::make_shared<parpat::Reducer>(a.device(), a.dtype(), a.shape(), 0, sum);
      const std::size_t bytes =
          static_cast<std::size_t>(plan->outputs()) * parpat::dtype_size(plan->result_dtype());
      auto values = std::make_shared<parpat::Buffer>(a.device(), bytes);
      return [=, out = std::vector<unsigned char>(bytes)]() mutable {
        plan->run(a, *values, parpat::Buffer());
        values->download(out.data(), bytes);
      };
    };
    auto histogrammer_run = [&](const parpat::HistogramBins& bins) {
      return [&, bins](const Array& a) -> Run {
        auto plan = std::make_shared<parpat::Histogrammer>(a.device(), a.dtype(), a.size(), bins);
        const std::size_t bytes = static_cast<std::size_t>(plan->slots()) * 8;
        auto counts = std::make_shared<parpat::Buffer>(a.device(), bytes);
        return [=, out = std::vector<unsigned char>(bytes)]() mutable {
          plan->run(a, *counts);
          counts->download(out.data(), bytes);
        };
      };
    };
    auto rank_histogrammer_run = [&](const parpat::HistogramBins& bins) {
      return [bins](const Array& a, Communicator& c) -> Run {
        auto plan = std::make_shared<parpat::RankHistogrammer>(a, c, bins);
        auto result = std::make_shared<parpat::HistogramResult>();
        return [=] { plan->run(a, *result); };
      };
    };
    const std::vector<Case> cases = {
        {"sum float32", [&](const Array& a) { parpat::reduce(a, sum); },
         [&](const Array& a, Communicator& c) { parpat::reduce(a, c, sum); }, reducer_run,
         [&](const Array& a, Communicator& c) -> Run {
           auto plan = std::make_shared<parpat::RankReducer>(a, c, sum);
           return [=] { plan->run(a); };
         }},
        {"histogram float32, 1024 bins", [&](const Array& a) { parpat::histogram(a, bins_1024); },
         [&](const Array& a, Communicator& c) { parpat::histogram(a, c, bins_1024); },
         histogrammer_run(bins_1024), rank_histogrammer_run(bins_1024)},
        {"histogram float32, 65536 bins", [&](const Array& a) { parpat::histogram(a, bins_65536); },
         [&](const Array& a, Communicator& c) { parpat::histogram(a, c, bins_65536); },
         histogrammer_run(bins_65536), rank_histogrammer_run(bins_65536)}};

    // Each rank's share of the whole, and the whole on the first device.
    auto split = [&](std::int64_t total, std::size_t parts_count) {
      std::vector<Array> parts;
      for (std::size_t r = 0; r < parts_count; ++r) {
        const auto first =
            total * static_cast<std::int64_t>(r) / static_cast<std::int64_t>(parts_count);
        const auto last =
            total * static_cast<std::int64_t>(r + 1) / static_cast<std::int64_t>(parts_count);
        parts.push_back(Array::from_host(devices[r], parpat::DType::float32, {last - first},
                                         host.data() + first));
      }
      return parts;
    };
    std::vector<std::pair<std::string, std::function<Comms()>>> engines = {
        {"threads", [&] { return parpat::thread_communicators(static_cast<int>(ranks)); }}};
    try {
      parpat::nccl_communicators(devices);
      engines.push_back({"nccl", [&] { return parpat::nccl_communicators(devices); }});
    } catch (const parpat::Error& e) {
      std::cout << "no NCCL rows: " << e.what() << "\n";
    }

    nlohmann::json rows = nlohmann::json::array();
    auto row = [&](const std::string& name, const std::string& engine, std::size_t r, double ms,
                   nlohmann::json extra) {
      std::string where = engine == "part" ? "rank 0's part alone"
                          : r == 1         ? devices[0].label()
                                           : spec + " over " + engine;
      std::string rate;
      for (auto& [key, value] : extra.items())
        rate += fmt::format("{}{:.4g} {}", rate.empty() ? "" : ", ", value.get<double>(), key);
      std::cout << fmt::format("{:32} {}: {:9.4f} ms, {}\n", name, where, ms, rate);
      extra["case"] = name;
      extra["ranks"] = r;
      extra["engine"] = engine == "part" ? "rank 0's part" : r == 1 ? "one device" : engine;
      extra["devices"] = r == 1 ? devices[0].label() : spec;
      extra["median_ms"] = ms;
      rows.push_back(extra);
    };
    // Every rank's one-device plan on its part at once, no collective.
    auto plans_at_once = [&](const std::vector<Array>& parts,
                             const std::function<Run(const Array&)>& plan) {
      return time_plans_over_ranks(parpat::thread_communicators(static_cast<int>(ranks)), parts,
                                   repeat, [&](const Array& a, Communicator& comm) -> Run {
                                     const Run run = plan(a);
                                     return [run, &comm] {
                                       comm.all_gather(nullptr, 0);  // start together
                                       run();
                                     };
                                   });
    };
    {
      const std::vector<Array> whole = split(n, 1), parts = split(n, ranks);
      for (const Case& c : cases) {
        const double gb = static_cast<double>(n) * sizeof(float) / 1e6;
        const double alone = time_alone(repeat, [&] { c.alone(whole[0]); });
        row(c.name, "", 1, alone, {{"gbps", gb / alone}, {"elements", n}});
        // Rank 0's part alone on its device: what the ranks would take without the collectives
        // and agreements.
        const double part = time_alone(repeat, [&] { c.alone(parts[0]); });
        row(c.name, "part", 1, part, {{"elements", parts[0].size()}});
        // Every rank's part at once, each the plain call on its device, no collective: what the
        // devices and the host cost when they work side by side.
        const double side_by_side =
            time_over_ranks(parpat::thread_communicators(static_cast<int>(ranks)), parts, repeat,
                            [&](const Array& a, Communicator& comm) {
                              comm.all_gather(nullptr, 0);  // start together
                              c.alone(a);
                            });
        row(c.name, "parts at once", ranks, side_by_side, {{"elements", n}});
        for (const auto& [engine, make] : engines) {
          const double ms = time_over_ranks(make(), parts, repeat, c.ranked);
          row(c.name, engine, ranks, ms,
              {{"gbps", gb / ms}, {"elements", n}, {"speedup", alone / ms}});
        }
        // Plans made once (Reducer / Histogrammer on one GPU, RankReducer / RankHistogrammer
        // over the ranks), each call their run and the result's download.
        const std::string planned = c.name + ", plans";
        const Run run_alone = c.plan_alone(whole[0]);
        const double plan_alone = time_alone(repeat, run_alone);
        row(planned, "", 1, plan_alone, {{"gbps", gb / plan_alone}, {"elements", n}});
        const Run run_part = c.plan_alone(parts[0]);
        row(planned, "part", 1, time_alone(repeat, run_part), {{"elements", parts[0].size()}});
        row(planned, "parts at once", ranks, plans_at_once(parts, c.plan_alone), {{"elements", n}});
        for (const auto& [engine, make] : engines) {
          const double ms = time_plans_over_ranks(make(), parts, repeat, c.plan_ranked);
          row(planned, engine, ranks, ms,
              {{"gbps", gb / ms}, {"elements", n}, {"speedup", plan_alone / ms}});
        }
      }
    }
    if (n >= x) {
      // Pairwise, split x: each rank's part of A against all of B (2^21 × 2^15), the gaussian
      // and the all-pairs product; one-shot calls, then plans (Pairwise on one GPU, RankPairwise
      // over the ranks), each call's C downloaded into a new vector.
      const std::vector<Array> a_whole = split(x, 1), a_parts = split(x, ranks);
      std::vector<Array> bs;
      for (const Device& d : devices)
        bs.push_back(Array::from_host(d, parpat::DType::float32, {y}, host.data()));
      parpat::PairwiseOptions product;
      product.brute_force = true;
      const double tpairs = static_cast<double>(x) * static_cast<double>(y) / 1e9;
      auto b_of = [&](const Array& a) -> const Array& {
        for (std::size_t r = 0; r < ranks; ++r)
          if (devices[r].shared_impl() == a.device().shared_impl()) return bs[r];
        return bs[0];
      };
      // C comes down into page-locked host memory kept across calls, on one GPU and over the
      // ranks alike (the fastest way to the host for both).
      auto page_locked = [](const Device& d, std::int64_t floats) {
        const auto owner = d.shared_impl();
        return std::shared_ptr<float>(
            static_cast<float*>(owner->allocate_host(static_cast<std::size_t>(floats) * 4)),
            [owner](float* p) { owner->release_host(p); });
      };
      auto pairwise_plan = [&](const parpat::PairwiseOptions& options) {
        return [&, options](const Array& a) -> Run {
          auto plan = std::make_shared<parpat::Pairwise>(a.device(), a.size(), y, options);
          auto c = std::make_shared<Array>(a.device(), parpat::DType::float32,
                                           std::vector<std::int64_t>{a.size()});
          auto out = page_locked(a.device(), a.size());
          const Array& b = b_of(a);
          return [=, &b] {
            plan->run(a, b, *c);
            c->buffer().download(out.get(), static_cast<std::size_t>(a.size()) * sizeof(float));
          };
        };
      };
      for (const auto& [kernel, options] :
           {std::pair{"gaussian", gaussian}, std::pair{"product (all pairs)", product}}) {
        const std::string name = fmt::format("pairwise {} 2^21 x 2^15", kernel);
        const double alone =
            time_alone(repeat, [&] { parpat::pairwise(a_whole[0], bs[0], options); });
        row(name, "", 1, alone, {{"tpairs_per_s", tpairs / alone}});
        const double part =
            time_alone(repeat, [&] { parpat::pairwise(a_parts[0], bs[0], options); });
        row(name, "part", 1, part, {{"elements", a_parts[0].size()}});
        const double side_by_side =
            time_over_ranks(parpat::thread_communicators(static_cast<int>(ranks)), a_parts, repeat,
                            [&](const Array& a, Communicator& comm) {
                              comm.all_gather(nullptr, 0);  // start together
                              parpat::pairwise(a, b_of(a), options);
                            });
        row(name, "parts at once", ranks, side_by_side, {});
        for (const auto& [engine, make] : engines) {
          const double ms = time_over_ranks(
              make(), a_parts, repeat,
              [&](const Array& a, Communicator& c) { parpat::pairwise(a, b_of(a), c, options); });
          row(name, engine, ranks, ms, {{"tpairs_per_s", tpairs / ms}, {"speedup", alone / ms}});
        }
        const std::string planned = name + ", plans";
        const double plan_alone = time_alone(repeat, pairwise_plan(options)(a_whole[0]));
        row(planned, "", 1, plan_alone, {{"tpairs_per_s", tpairs / plan_alone}});
        row(planned, "part", 1, time_alone(repeat, pairwise_plan(options)(a_parts[0])),
            {{"elements", a_parts[0].size()}});
        row(planned, "parts at once", ranks, plans_at_once(a_parts, pairwise_plan(options)), {});
        for (const auto& [engine, make] : engines) {
          const double ms = time_plans_over_ranks(
              make(), a_parts, repeat, [&](const Array& a, Communicator& c) -> Run {
                auto plan = std::make_shared<parpat::RankPairwise>(a, b_of(a), c, options);
                auto out = page_locked(a.device(), plan->x());
                return [plan, out, &a, &b = b_of(a)] { plan->run(a, b, out.get()); };
              });
          row(planned, engine, ranks, ms,
              {{"tpairs_per_s", tpairs / ms}, {"speedup", plan_alone / ms}});
        }
      }
    }
    // The collective alone: the counts of a 65536-bin histogram (plus its 3 outlier slots).
    const std::size_t slots = 65539;
    std::vector<Array> counts;
    for (const Device& d : devices)
      counts.emplace_back(d, parpat::DType::uint64, std::vector<std::int64_t>{std::int64_t(slots)});
    for (const auto& [engine, make] : engines) {
      const double host_ms =
          time_over_ranks(make(), counts, 10 * repeat, [&](const Array&, Communicator& c) {
            std::vector<std::uint64_t> values(slots, 1);
            c.all_reduce_sum(values.data(), values.size());
          });
      row("all-reduce 65539 uint64 (host)", engine, ranks, host_ms, {{"bytes", slots * 8.0}});
      if (engine != "nccl") continue;
      const double device_ms =
          time_over_ranks(make(), counts, 10 * repeat, [&](const Array& a, Communicator& c) {
            c.all_reduce_sum_on_device(static_cast<std::uint64_t*>(a.buffer().handle()), slots);
          });
      row("all-reduce 65539 uint64 (device)", engine, ranks, device_ms, {{"bytes", slots * 8.0}});
    }
    // The results' way to the host, every rank at once: C of 2^21 floats (8 MiB) and the counts
    // of a 65536-bin histogram (512 KiB), downloaded into a vector kept across calls and into a
    // new one each call (what a call that returns a new std::vector pays for its fresh pages).
    for (const std::size_t bytes : {std::size_t{8} << 20, std::size_t{512} << 10}) {
      std::vector<Array> sources;
      for (const Device& d : devices)
        sources.emplace_back(d, parpat::DType::uint8,
                             std::vector<std::int64_t>{static_cast<std::int64_t>(bytes)});
      for (const bool fresh : {false, true}) {
        std::vector<std::vector<unsigned char>> kept(ranks, std::vector<unsigned char>(bytes));
        const double ms = time_over_ranks(
            parpat::thread_communicators(static_cast<int>(ranks)), sources, 10 * repeat,
            [&](const Array& a, Communicator& comm) {
              comm.all_gather(nullptr, 0);  // start together
              std::vector<unsigned char> out(fresh ? bytes : 0);
              a.buffer().download(fresh ? out.data() : kept[comm.rank()].data(), bytes);
            });
        row(fmt::format("download {} KiB", bytes >> 10), fresh ? "new vector" : "kept vector",
            ranks, ms, {{"bytes", static_cast<double>(bytes)}});
      }
    }
    if (!json_path.empty()) std::ofstream(json_path) << rows.dump(1) << "\n";
  } catch (const parpat::Error& e) {
    std::cerr << "ranks_scaling: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
