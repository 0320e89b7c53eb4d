// parpat reduce --op OP [--axis all|rows|cols] [--progress] [COMMON] FILE: streamed, so the file
// may be larger than host and device memory.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "ranks.hpp"
#include "reduce/reduce_internal.hpp"

namespace parpat::cli {

void add_reduce_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "reduce", "reduce a .npy file (sum prod min max argmin argmax mean var std, nan-ops, ...)");
  struct Opts {
    CommonOptions common;
    StreamFlags stream;
    RankFlags ranks;
    std::string op, axis = "all", file;
    double ddof = 0;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option(
         "--op", o->op,
         "sum, prod, min, max, argmin, argmax, mean, var, std, nansum, nanprod, nanmin, "
         "nanmax, nanargmin, nanargmax, nanmean, nanvar, nanstd, count_nonzero, any or all")
      ->required();
  cmd->add_option("--ddof", o->ddof, "var and std divide by n - ddof (default 0, as numpy)");
  cmd->add_option("--axis", o->axis, "all, rows (numpy axis=1) or cols (numpy axis=0)");
  o->common.add_to(*cmd);
  o->stream.add_to(*cmd);
  o->ranks.add_to(*cmd);
  cmd->add_option("file", o->file,
                  "input: .npy, FILE.npz[:NAME], - for standard input; other files are raw bytes")
      ->required();
  cmd->callback([o] {
    ReduceOptions options;
    options.op = parse_reduce_op(o->op);
    options.axis = parse_axis(o->axis);
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
    if (shape.size() == 1 && shape[0] < 0) shape[0] = static_cast<std::int64_t>(stats.bytes);
    std::string variant = detail::find_reduce_variant(device.backend(), options.variant).info.name;
    bool many = options.axis != Axis::all;
    if (o->common.json) {
      nlohmann::json values = nlohmann::json::array(), indices = nlohmann::json::array();
      for (auto& v : r.values)
        values.push_back(to_json(v));
      for (auto i : r.indices)
        indices.push_back(i);
      nlohmann::json j = {{"pattern", "reduce"},
                          {"op", o->op},
                          {"dtype", dtype_name(dtype)},
                          {"shape", shape},
                          {"axis", o->axis},
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
        o->op, dtype_name(dtype),
        shape.size() == 2 ? fmt::format("{}x{}", shape[0], shape[1]) : std::to_string(shape[0]),
        dtype_name(r.dtype), o->axis, device.label(), variant, ranks.text(), r.time_ms,
        process_ms());
    for (std::size_t k = 0; k < r.values.size(); ++k) {
      std::string line = many ? fmt::format("[{}] ", k) : "";
      line += r.values[k].to_string();
      if (!r.indices.empty()) line += fmt::format("  at index {}", r.indices[k]);
      std::cout << line << "\n";
    }
  });
}

}  // namespace parpat::cli
