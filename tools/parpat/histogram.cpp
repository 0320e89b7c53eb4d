// parpat histogram [--bins N] [--range LO HI | --edges FILE] [--per-value [--minlength N]]
//                  [--weights FILE] [COMMON] [--csv] [--density] [--plot OUT.svg] FILE
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "parpat/histogram.hpp"
#include "parpat/io.hpp"
#include "ranks.hpp"

namespace parpat::cli {

namespace {

nlohmann::json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Each bin's count, or its sum of weights, as a float64 (what the bars and the listing show).
std::vector<double> bin_values(const HistogramResult& r) {
  if (r.weighted()) return r.sums;
  return std::vector<double>(r.counts.begin(), r.counts.end());
}

void write_svg(const std::string& path, const std::vector<double>& edges,
               const std::vector<double>& counts, const std::string& title) {
  std::ofstream out(path);
  if (!out) throw Error(ErrorKind::io, "cannot write " + path);
  const double width = 800, height = 400, left = 70, bottom = 40, top = 30, right = 20;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double peak = 0;
  for (double c : counts)
    peak = std::isfinite(c) ? std::max(peak, std::fabs(c)) : peak;
  if (peak == 0) peak = 1;
  double lo = edges.front(), hi = edges.back();
  auto x_of = [&](double e) { return left + (e - lo) / (hi - lo) * plot_w; };
  out << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"18\">{3}</text>\n",
      width, height, left, title);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    double x0 = x_of(edges[i]), x1 = x_of(edges[i + 1]);
    double h = std::isfinite(counts[i]) ? plot_h * std::fabs(counts[i]) / peak : 0;
    out << fmt::format(
        "<rect x=\"{:.3f}\" y=\"{:.3f}\" width=\"{:.3f}\" height=\"{:.3f}\" fill=\"#4477aa\" "
        "stroke=\"white\" stroke-width=\"{}\"><title>[{}, {}{}: {}</title></rect>\n",
        x0, top + plot_h - h, std::max(x1 - x0, 0.0), h, counts.size() > 200 ? 0 : 0.5, edges[i],
        edges[i + 1], i + 1 == counts.size() ? "]" : ")", counts[i]);
  }
  out << fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n"
      "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"black\"/>\n"
      "<text x=\"{0}\" y=\"{4}\" text-anchor=\"middle\">{5}</text>\n"
      "<text x=\"{2}\" y=\"{4}\" text-anchor=\"middle\">{6}</text>\n"
      "<text x=\"{7}\" y=\"{3}\" text-anchor=\"end\" dominant-baseline=\"hanging\">{8}</text>\n"
      "<text x=\"{7}\" y=\"{1}\" text-anchor=\"end\">0</text>\n</svg>\n",
      left, top + plot_h, left + plot_w, top, top + plot_h + 18, lo, hi, left - 6, peak);
}

}  // namespace

void add_histogram_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "histogram", "histogram of a .npy file (numpy.histogram's bins) or of a file's bytes");
  struct Opts {
    CommonOptions common;
    StreamFlags stream;
    RankFlags ranks;
    std::int64_t bins = 10, minlength = 0;
    std::pair<double, double> range;
    std::string edges, file, plot, weights;
    bool per_value = false, csv = false, density = false;
  };
  auto o = std::make_shared<Opts>();
  auto* bins = cmd->add_option("--bins", o->bins, "number of even bins (default 10)");
  auto* range = cmd->add_option("--range", o->range, "LO HI: the bins' range (default: min, max)");
  auto* edges =
      cmd->add_option("--edges", o->edges,
                      "a 1-D .npy file (or FILE.npz[:NAME]) of strictly increasing edges, any "
                      "real dtype, compared as float64");
  range->excludes(edges);
  auto* per_value = cmd->add_flag("--per-value", o->per_value,
                                  "one bin per integer value (default for raw byte files)");
  per_value->excludes(bins)->excludes(range)->excludes(edges);
  edges->excludes(bins);
  cmd->add_option("--minlength", o->minlength,
                  "with --per-value: at least this many bins (numpy.bincount's minlength)")
      ->needs(per_value)
      ->check(CLI::Range(std::int64_t{0}, kMaxHistogramBins));
  cmd->add_option("--weights", o->weights,
                  "a float32 or float64 file of one weight per value, of the values' shape "
                  "(.npy, FILE.npz[:NAME]): each bin gets the float64 sum of its values' weights, "
                  "as numpy.histogram(..., weights=) and numpy.bincount(x, weights)");
  o->common.add_to(*cmd);
  o->common.add_raw_dtype_to(*cmd);
  o->stream.add_to(*cmd);
  o->ranks.add_to(*cmd);
  cmd->add_flag("--csv", o->csv, "print left,right,count lines");
  cmd->add_flag("--density", o->density,
                "also give numpy's density=True: count / bin width / the bins' total (JSON: "
                "\"density\"; --csv and the listing show it instead of the count)");
  cmd->add_option("--plot", o->plot, "write an SVG bar chart to this file");
  cmd->add_option("file", o->file,
                  "input: .npy, FILE.npz[:NAME], - for standard input; other files are raw bytes")
      ->required();
  cmd->callback([o, bins, range, edges] {
    if (o->common.json && o->csv) throw_invalid("--json and --csv exclude each other");
    HistogramBins spec = HistogramBins::even(o->bins);
    if (*edges) {
      spec = HistogramBins::explicit_edges(read_edges(o->edges));
    } else if (*range) {
      spec = HistogramBins::even(o->bins, o->range.first, o->range.second);
    }
    HistogramOptions options;
    options.variant = o->common.variant;
    options.timed = true;  // the answer reports time_ms
    struct Answer {
      HistogramResult r;
      HistogramBins spec;
      StreamStats stats;
      OpenedInput input;
      RankSummary ranks;
    };
    auto answer = run_on_ranks<Answer>(o->common, o->ranks, o->file, [&](RankInput& in) {
      OpenedInput& input = *in.opened;
      HistogramBins rank_spec = spec;
      if (o->per_value || (input.source.raw() && !*bins && !*range && !*edges))
        rank_spec = HistogramBins::per_value(o->minlength);
      StreamOptions stream = in.reports() ? o->stream.options() : StreamOptions{};
      StreamStats stats;
      HistogramResult r;
      if (!o->weights.empty()) {
        Source weights = Source::open(o->weights);
        r = in.comm ? histogram(input.source, weights, input.device, *in.comm, rank_spec, options,
                                stream, &stats)
                    : histogram(input.source, weights, input.device, rank_spec, options, stream,
                                &stats);
      } else if (in.comm) {
        r = histogram(input.source, input.device, *in.comm, rank_spec, options, stream, &stats);
      } else {
        r = histogram(input.source, input.device, rank_spec, options, stream, &stats);
      }
      return Answer{std::move(r), rank_spec, stats, input, RankSummary(in)};
    });
    if (!answer) return;
    auto& [r, spec_used, stats, input, ranks] = *answer;
    Device& device = input.device;
    const DType dtype = input.source.dtype();
    std::uint64_t n = 0;
    for (auto c : r.counts)
      n += c;
    n += r.underflow + r.overflow + r.nan;
    if (r.weighted()) n = static_cast<std::uint64_t>(input.source.size());
    const std::vector<double> values = bin_values(r);
    std::string variant = options.variant;
    if (variant.empty()) variant = device.backend() == Backend::cpu ? "parallel" : "fast";
    std::vector<double> edge_values = r.bins.edge_values();
    const std::vector<double> density = o->density ? histogram_density(r) : std::vector<double>{};
    if (!o->plot.empty())
      write_svg(o->plot, edge_values, values,
                fmt::format("{} ({} values of {})", o->file, n, dtype_name(dtype)));
    if (o->common.json) {
      nlohmann::json j = {{"pattern", "histogram"},
                          {"dtype", dtype_name(dtype)},
                          {"n", n},
                          {"bins", values.size()}};
      if (r.bins.kind == HistogramBins::Kind::edges) {
        nlohmann::json e = nlohmann::json::array();
        for (double v : r.bins.edges)
          e.push_back(number_json(v));
        j["edges"] = e;
      } else {
        j["range"] = {number_json(r.bins.lo), number_json(r.bins.hi)};
      }
      if (spec_used.kind == HistogramBins::Kind::per_value) j["per_value"] = true;
      auto numbers = [](const std::vector<double>& v) {
        nlohmann::json a = nlohmann::json::array();
        for (double x : v)
          a.push_back(number_json(x));
        return a;
      };
      if (r.weighted()) {
        j["weighted"] = true;
        j["sums"] = numbers(r.sums);
      } else {
        j["counts"] = r.counts;
      }
      if (o->density) j["density"] = numbers(density);
      if (r.weighted()) {
        j["underflow"] = number_json(r.underflow_sum);
        j["overflow"] = number_json(r.overflow_sum);
        j["nan"] = number_json(r.nan_sum);
      } else {
        j["underflow"] = r.underflow;
        j["overflow"] = r.overflow;
        j["nan"] = r.nan;
      }
      j["backend"] = backend_name(device.backend());
      j["device"] = device.info().name;
      j["variant"] = variant;
      j["time_ms"] = r.time_ms;
      ranks.add_to(j);
      add_stream_json(j, stats, input.startup_ms);
      std::cout << j.dump() << "\n";
      return;
    }
    // A bin's number as the CSV and the listing give it: the density, the count or the sum.
    auto bin_text = [&](std::size_t i, const char* float_format) {
      if (o->density) return fmt::format(fmt::runtime(float_format), density[i]);
      if (r.weighted()) return fmt::format(fmt::runtime(float_format), r.sums[i]);
      return fmt::format("{}", r.counts[i]);
    };
    if (o->csv) {
      std::cout << (o->density     ? "left,right,density\n"
                    : r.weighted() ? "left,right,sum\n"
                                   : "left,right,count\n");
      for (std::size_t i = 0; i < values.size(); ++i)
        std::cout << fmt::format("{},{},{}\n", edge_values[i], edge_values[i + 1],
                                 bin_text(i, "{}"));
      return;
    }
    std::cout << fmt::format(
        "{}histogram of {} {} values of {} on {} [{}]{}, {:.4f} ms on the device, {:.1f} ms in "
        "all{}\n",
        r.weighted() ? "weighted " : "", n, dtype_name(dtype), o->file, device.label(), variant,
        ranks.text(), r.time_ms, process_ms(),
        stats.passes > 1 ? " (a first pass found the range)" : "");
    double peak = 0;
    for (double v : values)
      peak = std::isfinite(v) ? std::max(peak, std::fabs(v)) : peak;
    const bool per = spec_used.kind == HistogramBins::Kind::per_value;
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::string label = per ? fmt::format("{}", i)
                              : fmt::format("[{}, {}{}", edge_values[i], edge_values[i + 1],
                                            i + 1 == values.size() ? "]" : ")");
      auto bar = peak > 0 && std::isfinite(values[i])
                     ? static_cast<std::size_t>(40.0 * std::fabs(values[i]) / peak + 0.5)
                     : 0;
      std::cout << fmt::format("{:>28} {:>14} {}\n", label, bin_text(i, "{:.6g}"),
                               std::string(bar, '#'));
    }
    if (r.weighted())
      std::cout << fmt::format("weights below {:.6g}, above {:.6g}, of NaN values {:.6g}\n",
                               r.underflow_sum, r.overflow_sum, r.nan_sum);
    else
      std::cout << fmt::format("underflow {}, overflow {}, nan {}\n", r.underflow, r.overflow,
                               r.nan);
  });
}

}  // namespace parpat::cli
