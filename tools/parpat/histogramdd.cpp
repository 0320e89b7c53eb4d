// parpat histogramdd [--bins N | N0,N1,...] [--range LO:HI,...] [--edges D0.npy,...]
//                    [--weights FILE] [--density] [--csv] [COMMON] FILE [FILE...]
// parpat histogram2d [the same options] X.npy Y.npy | XY.npy
// Joint histograms (numpy.histogramdd, numpy.histogram2d) of samples read whole onto the device:
// one (N, D) file, or D files of 1-D coordinates of one length and dtype.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <future>
#include <iostream>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/histogramdd.hpp"
#include "parpat/io.hpp"

namespace parpat::cli {

namespace {

nlohmann::json number_json(double v) {
  return to_json(Scalar{DType::float64, 0, 0, v});
}

nlohmann::json numbers_json(const std::vector<double>& values) {
  nlohmann::json a = nlohmann::json::array();
  for (double v : values)
    a.push_back(number_json(v));
  return a;
}

std::string shape_text(const std::vector<std::int64_t>& shape, const char* separator) {
  std::string t;
  for (std::size_t i = 0; i < shape.size(); ++i)
    t += (i ? separator : "") + std::to_string(shape[i]);
  return t;
}

// A comma-separated option as one entry per dimension; a single entry serves every dimension.
std::vector<std::string> per_dimension(const std::string& option, const std::string& text,
                                       int dims) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
    parts.push_back(text.substr(start, comma - start));
  parts.push_back(text.substr(start));
  if (parts.size() == 1) return std::vector<std::string>(static_cast<std::size_t>(dims), parts[0]);
  if (parts.size() != static_cast<std::size_t>(dims))
    throw_invalid(
        fmt::format("{} has {} entries for {} dimensions (give one, or one per dimension)", option,
                    parts.size(), dims));
  return parts;
}

std::int64_t parse_count(const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > kMaxHistogramBins)
    throw_invalid(
        fmt::format("--bins takes bin counts from 1 to {}, got '{}'", kMaxHistogramBins, text));
  return v;
}

// "LO:HI" with finite LO <= HI (LO = HI widens to [LO - 0.5, HI + 0.5] when the bins are
// resolved, as numpy does).
std::pair<double, double> parse_range(const std::string& text) {
  const std::size_t colon = text.find(':');
  auto number = [](const std::string& s, double& v) {
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size();
  };
  double lo = 0, hi = 0;
  if (colon == std::string::npos || !number(text.substr(0, colon), lo) ||
      !number(text.substr(colon + 1), hi) || !std::isfinite(lo) || !std::isfinite(hi) ||
      !(lo <= hi))
    throw_invalid("--range takes LO:HI with finite LO <= HI for each dimension, got '" + text +
                  "'");
  return {lo, hi};
}

// The samples as read: one (N, D) array, or D 1-D arrays of coordinates.
struct Samples {
  std::vector<HostArray> arrays;
  bool table = false;
  std::int64_t n = 0;
  int dims = 0;
  DType dtype() const { return arrays.front().dtype; }
};

Samples read_samples(const std::vector<std::string>& files) {
  Samples s;
  for (const auto& f : files)
    s.arrays.push_back(read_input(f));
  const HostArray& first = s.arrays.front();
  s.table = files.size() == 1 && first.shape.size() == 2;
  if (s.table) {
    s.n = first.shape[0];
    s.dims = static_cast<int>(first.shape[1]);
  } else {
    for (std::size_t i = 0; i < files.size(); ++i) {
      const HostArray& a = s.arrays[i];
      if (a.shape.size() != 1)
        throw_invalid(fmt::format(
            "{} holds {}-D data of shape ({}): give one (N, D) file or D files of 1-D coordinates",
            files[i], a.shape.size(), shape_text(a.shape, ", ")));
      if (a.size() != first.size())
        throw_invalid(fmt::format("the coordinate files differ in length: {} holds {}, {} holds {}",
                                  files[0], first.size(), files[i], a.size()));
      if (a.dtype != first.dtype)
        throw_invalid(fmt::format("the coordinate files differ in dtype: {} is {}, {} is {}",
                                  files[0], dtype_name(first.dtype), files[i],
                                  dtype_name(a.dtype)));
    }
    s.n = first.size();
    s.dims = static_cast<int>(files.size());
  }
  return s;
}

struct Opts {
  CommonOptions common;
  std::string bins = "10", range, edges, weights;
  std::vector<std::string> files;
  bool csv = false, density = false;
};

std::vector<HistogramBins> bins_of(const Opts& o, int dims) {
  const auto counts = per_dimension("--bins", o.bins, dims);
  const auto ranges = per_dimension("--range", o.range, dims);
  const auto edges = per_dimension("--edges", o.edges, dims);
  std::vector<HistogramBins> bins;
  for (std::size_t d = 0; d < counts.size(); ++d) {
    if (!edges[d].empty()) {
      bins.push_back(HistogramBins::explicit_edges(read_edges(edges[d])));
    } else if (!ranges[d].empty()) {
      const auto [lo, hi] = parse_range(ranges[d]);
      bins.push_back(HistogramBins::even(parse_count(counts[d]), lo, hi));
    } else {
      bins.push_back(HistogramBins::even(parse_count(counts[d])));
    }
  }
  return bins;
}

// "[lo, hi)" of bin k of edges (the last bin closed).
std::string interval(const std::vector<double>& edges, std::size_t k) {
  return fmt::format("[{:.4g}, {:.4g}{}", edges[k], edges[k + 1],
                     k + 2 == edges.size() ? "]" : ")");
}

void run(const std::string& name, int want_dims, const Opts& o) {
  if (o.common.json && o.csv) throw_invalid("--json and --csv exclude each other");
  // The device's start-up overlaps the reading of the files.
  const auto begin = std::chrono::steady_clock::now();
  auto opening = std::async(std::launch::async, [&o, begin] {
    Device d = o.common.open_device();
    return std::make_pair(d, ms_since(begin));
  });
  Samples s;
  std::vector<HistogramBins> bins;
  std::optional<HostArray> weights;
  try {
    s = read_samples(o.files);
    if (want_dims && s.dims != want_dims)
      throw_invalid(fmt::format("{} takes X.npy Y.npy or one (N, 2) file, got {} dimension{}", name,
                                s.dims, s.dims == 1 ? "" : "s"));
    if (s.dims < 1 || s.dims > kMaxHistogramDims)
      throw_invalid(
          fmt::format("{} takes 1 to {} dimensions, got {}", name, kMaxHistogramDims, s.dims));
    bins = bins_of(o, s.dims);
    if (!o.weights.empty()) {
      weights = read_input(o.weights);
      if (weights->shape.size() != 1 || weights->size() != s.n)
        throw_invalid(
            fmt::format("--weights {} has shape ({}), the samples need one weight each ({})",
                        o.weights, shape_text(weights->shape, ", "), s.n));
    }
  } catch (...) {
    opening.wait();
    throw;
  }
  auto [device, startup_ms] = opening.get();

  HistogramOptions options;
  options.variant = o.common.variant;
  options.timed = true;  // the answer reports time_ms
  std::optional<Array> w;
  if (weights) w = Array::from_host(device, weights->dtype, weights->shape, weights->data.data());
  HistogramDDResult r;
  if (s.table) {
    const HostArray& h = s.arrays.front();
    Array a = Array::from_host(device, h.dtype, h.shape, h.data.data());
    r = w ? histogramdd(a, *w, bins, options) : histogramdd(a, bins, options);
  } else {
    std::vector<Array> coordinates;
    for (const HostArray& h : s.arrays)
      coordinates.push_back(Array::from_host(device, h.dtype, h.shape, h.data.data()));
    r = w ? histogramdd(coordinates, *w, bins, options) : histogramdd(coordinates, bins, options);
  }
  std::string variant = options.variant;
  if (variant.empty()) variant = device.backend() == Backend::cpu ? "parallel" : "fast";
  const std::vector<double> density = o.density ? histogramdd_density(r) : std::vector<double>{};

  if (o.common.json) {
    nlohmann::json j = {{"pattern", name},  {"dtype", dtype_name(s.dtype())},
                        {"n", s.n},         {"dims", s.dims},
                        {"shape", r.shape}, {"bins", nlohmann::json::array()}};
    for (const HistogramBins& b : r.bins) {
      if (b.kind == HistogramBins::Kind::edges)
        j["bins"].push_back({{"edges", numbers_json(b.edges)}});
      else
        j["bins"].push_back({{"range", {number_json(b.lo), number_json(b.hi)}}});
    }
    if (r.weighted()) {
      j["weighted"] = true;
      j["sums"] = numbers_json(r.sums);
      j["outside"] = number_json(r.outside_sum);
    } else {
      j["counts"] = r.counts;
      j["outside"] = r.outside;
    }
    if (o.density) j["density"] = numbers_json(density);
    j["backend"] = backend_name(device.backend());
    j["device"] = device.info().name;
    j["variant"] = variant;
    j["time_ms"] = r.time_ms;
    j["wall_ms"] = process_ms();
    j["startup_ms"] = startup_ms;
    std::cout << j.dump() << "\n";
    return;
  }

  std::vector<std::vector<double>> edges;
  for (const HistogramBins& b : r.bins)
    edges.push_back(b.edge_values());
  // Bin i's index along each dimension (C order).
  auto index_of = [&](std::int64_t i) {
    std::vector<std::size_t> k(edges.size());
    for (std::size_t d = edges.size(); d-- > 0;) {
      k[d] = static_cast<std::size_t>(i % r.shape[d]);
      i /= r.shape[d];
    }
    return k;
  };
  // A bin's number as the CSV and the listing give it: the density, the sum or the count.
  auto bin_text = [&](std::int64_t i, const char* float_format) {
    const auto k = static_cast<std::size_t>(i);
    if (o.density) return fmt::format(fmt::runtime(float_format), density[k]);
    if (r.weighted()) return fmt::format(fmt::runtime(float_format), r.sums[k]);
    return fmt::format("{}", r.counts[k]);
  };
  if (o.csv) {
    for (std::size_t d = 0; d < edges.size(); ++d)
      std::cout << fmt::format("left{0},right{0},", d);
    std::cout << (o.density ? "density\n" : r.weighted() ? "sum\n" : "count\n");
    for (std::int64_t i = 0; i < r.size(); ++i) {
      const auto k = index_of(i);
      for (std::size_t d = 0; d < edges.size(); ++d)
        std::cout << fmt::format("{},{},", edges[d][k[d]], edges[d][k[d] + 1]);
      std::cout << bin_text(i, "{}") << "\n";
    }
    return;
  }

  std::cout << fmt::format(
      "{}{} of {} {} samples in {} dimension{} ({} bins) on {} [{}], {:.4f} ms on the device, "
      "{:.1f} ms in all\n",
      r.weighted() ? "weighted " : "", name, s.n, dtype_name(s.dtype()), s.dims,
      s.dims == 1 ? "" : "s", shape_text(r.shape, "×"), device.label(), variant, r.time_ms,
      process_ms());
  if (s.dims == 2 && r.shape[0] <= 40 && r.shape[1] <= 12) {
    // A grid: rows are the bins of dimension 0, columns those of dimension 1.
    std::size_t width = 0;
    for (std::int64_t i = 0; i < r.size(); ++i)
      width = std::max(width, bin_text(i, "{:.4g}").size());
    for (std::size_t k = 0; k < edges[1].size() - 1; ++k)
      width = std::max(width, interval(edges[1], k).size());
    std::cout << fmt::format("{:>24}", "");
    for (std::size_t k = 0; k < edges[1].size() - 1; ++k)
      std::cout << fmt::format(" {:>{}}", interval(edges[1], k), width);
    std::cout << "\n";
    for (std::int64_t row = 0; row < r.shape[0]; ++row) {
      std::cout << fmt::format("{:>24}", interval(edges[0], static_cast<std::size_t>(row)));
      for (std::int64_t col = 0; col < r.shape[1]; ++col)
        std::cout << fmt::format(" {:>{}}", bin_text(row * r.shape[1] + col, "{:.4g}"), width);
      std::cout << "\n";
    }
  } else {
    // The non-zero bins, the first 50 of them.
    std::int64_t listed = 0, more = 0;
    for (std::int64_t i = 0; i < r.size(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      if ((r.weighted() ? r.sums[k] : static_cast<double>(r.counts[k])) == 0) continue;
      if (listed == 50) {
        ++more;
        continue;
      }
      ++listed;
      std::string label;
      const auto index = index_of(i);
      for (std::size_t d = 0; d < edges.size(); ++d)
        label += (d ? " × " : "") + interval(edges[d], index[d]);
      std::cout << fmt::format("{} {}\n", label, bin_text(i, "{:.6g}"));
    }
    if (more) std::cout << fmt::format("and {} more non-zero bins (--csv lists every bin)\n", more);
  }
  if (r.weighted())
    std::cout << fmt::format("weights of samples in no bin {:.6g}\n", r.outside_sum);
  else
    std::cout << fmt::format("samples in no bin (outside or NaN) {}\n", r.outside);
}

void add_joint_command(CLI::App& app, const std::string& name, int dims,
                       const std::string& description, const std::string& files) {
  auto* cmd = app.add_subcommand(name, description);
  auto o = std::make_shared<Opts>();
  cmd->add_option("--bins", o->bins,
                  "even bins per dimension: N for every dimension or N0,N1,... (default 10)");
  cmd->add_option("--range", o->range,
                  "LO:HI for every dimension or LO:HI,LO:HI,... (an empty entry: that "
                  "coordinate's min:max, the default)");
  cmd->add_option("--edges", o->edges,
                  "1-D .npy files of strictly increasing edges (any real dtype, as float64), one "
                  "for every dimension "
                  "or D0.npy,D1.npy,... (an empty entry: even bins for that dimension); they "
                  "replace --bins and --range where given");
  cmd->add_option("--weights", o->weights,
                  "a 1-D float32 or float64 file of one weight per sample: each bin gets the "
                  "float64 sum of its samples' weights (numpy's weights=)");
  cmd->add_flag("--density", o->density,
                "also give numpy's density=True (JSON: \"density\"; --csv and the listing show "
                "it instead of the count)");
  cmd->add_flag("--csv", o->csv, "print one line per bin: its edges per dimension, then its value");
  o->common.add_to(*cmd);
  cmd->add_option("files", o->files, files)->required();
  cmd->callback([o, name, dims] { run(name, dims, *o); });
}

}  // namespace

void add_histogramdd_command(CLI::App& app) {
  add_joint_command(app, "histogramdd", 0,
                    "joint histogram of samples in 1 to 8 dimensions (numpy.histogramdd)",
                    "one (N, D) .npy file of samples, or D .npy files of 1-D coordinates "
                    "(FILE.npz[:NAME] too)");
  add_joint_command(app, "histogram2d", 2, "joint histogram of 2-D samples (numpy.histogram2d)",
                    "X.npy Y.npy, or one (N, 2) .npy file (FILE.npz[:NAME] too)");
}

}  // namespace parpat::cli
