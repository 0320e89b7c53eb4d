// parpat reduce --op OP [--axis all|rows|cols] [COMMON] FILE
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "reduce/reduce_internal.hpp"

namespace parpat::cli {

void add_reduce_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("reduce", "reduce a .npy file (sum prod min max argmin argmax)");
  struct Opts {
    CommonOptions common;
    std::string op, axis = "all", file;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--op", o->op, "sum, prod, min, max, argmin or argmax")->required();
  cmd->add_option("--axis", o->axis, "all, rows (numpy axis=1) or cols (numpy axis=0)");
  o->common.add_to(*cmd);
  cmd->add_option("file", o->file, "input .npy file (other files are read as raw bytes)")
      ->required();
  cmd->callback([o] {
    ReduceOptions options;
    options.op = parse_reduce_op(o->op);
    options.axis = parse_axis(o->axis);
    options.variant = o->common.variant;
    options.timed = true;  // the answer reports time_ms
    HostArray host = read_input(o->file);
    Device device = o->common.open_device();
    Array in = Array::from_host(device, host.dtype, host.shape, host.data.data());
    ReduceResult r = reduce(in, options);
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
                          {"dtype", dtype_name(host.dtype)},
                          {"shape", host.shape},
                          {"axis", o->axis},
                          {"backend", backend_name(device.backend())},
                          {"device", device.info().name},
                          {"variant", variant},
                          {"result", many ? values : values.at(0)}};
      if (is_arg_op(options.op)) j["index"] = many ? indices : indices.at(0);
      j["time_ms"] = r.time_ms;
      std::cout << j.dump() << "\n";
      return;
    }
    std::cout << fmt::format(
        "{} of {} {} ({}), axis {}, on {} [{}], {:.4f} ms\n", o->op, dtype_name(host.dtype),
        host.shape.size() == 2 ? fmt::format("{}x{}", host.shape[0], host.shape[1])
                               : std::to_string(host.shape[0]),
        dtype_name(r.dtype), o->axis, device.label(), variant, r.time_ms);
    for (std::size_t k = 0; k < r.values.size(); ++k) {
      std::string line = many ? fmt::format("[{}] ", k) : "";
      line += r.values[k].to_string();
      if (!r.indices.empty()) line += fmt::format("  at index {}", r.indices[k]);
      std::cout << line << "\n";
    }
  });
}

}  // namespace parpat::cli
