// parpat reduce --op OP [--axis all|none|rows|cols|I[,J...]] [--keepdims] [--progress] [COMMON]
// FILE: streamed, so the file may be larger than host and device memory (axes that interleave
// with kept ones load the input onto the device instead).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <iostream>

#include "commands.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "ranks.hpp"
#include "reduce/reduce_internal.hpp"

namespace parpat::cli {

namespace {

// --axis: all or none (every axis), rows or cols (of a 2-D input), or numpy's integer axes
// separated by commas ("0,2", "-1").
void set_axis(ReduceOptions& options, const std::string& text) {
  if (text == "all" || text == "none") return;
  if (text == "rows" || text == "cols") {
    options.axis = parse_axis(text);
    return;
  }
  std::vector<int> axes;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    int a = 0;
    const char* first = text.data() + at;
    const auto [ptr, ec] = std::from_chars(first, text.data() + end, a);
    if (ec != std::errc() || ptr != text.data() + end || end == at)
      throw_invalid("unknown axis '" + text +
                    "' (expected all, none, rows, cols or integer axes such as 0,2 or -1)");
    axes.push_back(a);
    at = end + 1;
  }
  options.axes = axes;
}

// The ops that take --ddof.
bool takes_ddof(ReduceOp op) {
  return op == ReduceOp::var || op == ReduceOp::std || op == ReduceOp::nanvar ||
         op == ReduceOp::nanstd;
}

// numpy warns "Degrees of freedom <= 0 for slice" and returns inf or NaN where a variance's
// ddof is at least the values each result takes; the command states those values and fails.
void check_degrees_of_freedom(const std::string& op_name, ReduceOp op, double ddof,
                              const std::vector<std::int64_t>& shape, const ReduceResult& r) {
  if (!takes_ddof(op)) return;
  std::int64_t total = 1, results = 1;
  for (auto n : shape)
    total *= n;
  for (auto n : r.shape)
    results *= n;
  const std::int64_t per_result = results ? total / results : 0;
  if (results == 0 || ddof < static_cast<double>(per_result)) return;
  std::vector<std::string> seen;
  for (const auto& v : r.values)
    if (std::string t = v.to_string(); std::find(seen.begin(), seen.end(), t) == seen.end())
      seen.push_back(std::move(t));
  throw_invalid(fmt::format(
      "{} with ddof={} over {} value{} per result: no degrees of freedom left (numpy warns and "
      "returns {})",
      op_name, ddof, per_result, per_result == 1 ? "" : "s", fmt::join(seen, " and ")));
}

// "2x3x4".
std::string shape_text(const std::vector<std::int64_t>& shape) {
  return shape.empty() ? "scalar" : fmt::format("{}", fmt::join(shape, "x"));
}

// "[1, 2] " for output k of a result of `shape` ("[k] " when it is 1-D).
std::string output_label(std::size_t k, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> at(shape.size());
  auto rest = static_cast<std::int64_t>(k);
  for (std::size_t d = shape.size(); d-- > 0;) {
    at[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
  }
  return fmt::format("[{}] ", fmt::join(at, ", "));
}

}  // namespace

void add_reduce_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "reduce", "reduce a .npy file (sum prod min max argmin argmax mean var std, nan-ops, ...)");
  struct Opts {
    CommonOptions common;
    StreamFlags stream;
    RankFlags ranks;
    std::string op, axis = "all", file;
    double ddof = 0;
    bool keepdims = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option(
         "--op", o->op,
         "sum, prod, min, max, argmin, argmax, mean, var, std, nansum, nanprod, nanmin, "
         "nanmax, nanargmin, nanargmax, nanmean, nanvar, nanstd, count_nonzero, any or all")
      ->required();
  auto* ddof = cmd->add_option("--ddof", o->ddof,
                               "var, std, nanvar and nanstd divide by n - ddof (default 0, as "
                               "numpy)");
  cmd->add_option("--axis", o->axis,
                  "all or none (every axis), rows or cols of a 2-D input (numpy axis=1, axis=0), "
                  "or numpy's axes: 0,2 or -1");
  cmd->add_flag("--keepdims", o->keepdims, "keep each reduced axis as a 1 (numpy's keepdims)");
  o->common.add_to(*cmd);
  o->common.add_raw_dtype_to(*cmd);
  o->stream.add_to(*cmd);
  o->ranks.add_to(*cmd);
  cmd->add_option("file", o->file,
                  "input: .npy, FILE.npz[:NAME], - for standard input; other files are raw bytes")
      ->required();
  cmd->callback([o, ddof] {
    ReduceOptions options;
    options.op = parse_reduce_op(o->op);
    if (*ddof && !takes_ddof(options.op))
      throw_invalid("--ddof applies to var, std, nanvar and nanstd, not " + o->op);
    set_axis(options, o->axis);
    options.keepdims = o->keepdims;
    options.variant = o->common.variant;
    options.ddof = o->ddof;
    options.timed = true;  // the answer reports time_ms
    struct Answer {
      ReduceResult r;
      StreamStats stats;
      OpenedInput input;
      RankSummary ranks;
    };
    auto answer = run_on_ranks<Answer>(o->common, o->ranks, o->file, [&](RankInput& in) {
      OpenedInput& input = *in.opened;
      StreamOptions stream = in.reports() ? o->stream.options() : StreamOptions{};
      StreamStats stats;
      ReduceResult r = in.comm
                           ? reduce(input.source, input.device, *in.comm, options, stream, &stats)
                           : reduce(input.source, input.device, options, stream, &stats);
      return Answer{std::move(r), stats, input, RankSummary(in)};
    });
    if (!answer) return;
    auto& [r, stats, input, ranks] = *answer;
    Device& device = input.device;
    const DType dtype = input.source.dtype();
    std::vector<std::int64_t> shape = input.source.shape();
    if (shape.size() == 1 && shape[0] < 0)  // raw input of unknown length: the values it had
      shape[0] =
          static_cast<std::int64_t>(stats.bytes / std::max(stats.passes, 1) / dtype_size(dtype));
    check_degrees_of_freedom(o->op, options.op, options.ddof, shape, r);
    std::string variant = detail::find_reduce_variant(device.backend(), options.variant).info.name;
    const bool many = !r.shape.empty();
    if (o->common.json) {
      nlohmann::json axis = o->axis == "none" ? "all" : o->axis;
      if (options.axes) axis = reduced_axes(static_cast<int>(shape.size()), options);
      nlohmann::json values = nlohmann::json::array(), indices = nlohmann::json::array();
      for (auto& v : r.values)
        values.push_back(to_json(v));
      for (auto i : r.indices)
        indices.push_back(i);
      nlohmann::json j = {{"pattern", "reduce"},
                          {"op", o->op},
                          {"dtype", dtype_name(dtype)},
                          {"shape", shape},
                          {"axis", axis},
                          {"keepdims", options.keepdims},
                          {"result_shape", r.shape},
                          {"backend", backend_name(device.backend())},
                          {"device", device.info().name},
                          {"variant", variant},
                          {"result", many ? values : values.at(0)}};
      if (is_arg_op(options.op)) j["index"] = many ? indices : indices.at(0);
      j["time_ms"] = r.time_ms;
      ranks.add_to(j);
      add_stream_json(j, stats, input.startup_ms);
      std::cout << j.dump() << "\n";
      return;
    }
    std::cout << fmt::format(
        "{} of {} {} ({}), axis {}, on {} [{}]{}, {:.4f} ms on the device, {:.1f} ms in all\n",
        o->op, dtype_name(dtype), shape_text(shape), dtype_name(r.dtype),
        o->axis + (options.keepdims ? fmt::format(" (kept: {})", shape_text(r.shape)) : ""),
        device.label(), variant, ranks.text(), r.time_ms, process_ms());
    for (std::size_t k = 0; k < r.values.size(); ++k) {
      std::string line = many ? output_label(k, r.shape) : "";
      line += r.values[k].to_string();
      if (!r.indices.empty()) line += fmt::format("  at index {}", r.indices[k]);
      std::cout << line << "\n";
    }
  });
}

}  // namespace parpat::cli
