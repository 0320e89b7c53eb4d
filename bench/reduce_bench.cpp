// `parpat bench reduce`: every variant of the device's backend over dtype × op × size, plus
// rows / cols of a square float32 matrix, each verified against the CPU reference and timed
// beside CUB (CUDA) or numpy (CPU) on the same inputs. Short CUDA cases are timed as graph
// replays (bench.hpp's CaseTimer), the variants and CUB alike.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "bench.hpp"
#include "cub_baselines.hpp"
#include "parpat/error.hpp"
#include "parpat/registry.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/verify.hpp"

namespace parpat::bench {

namespace {

struct Case {
  DType dtype;
  ReduceOp op;
  Axis axis;
  std::int64_t rows, cols;
};

std::string size_label(std::int64_t n) {
  int log = 0;
  while ((std::int64_t{1} << log) < n)
    ++log;
  return (std::int64_t{1} << log) == n ? fmt::format("2^{}", log) : std::to_string(n);
}

std::vector<Case> reduce_cases(const Device& device, const BenchOptions& o) {
  bool gpu = device.backend() != Backend::cpu && device.info().independent_groups;
  std::vector<std::int64_t> sizes = o.sizes;
  if (sizes.empty()) {
    if (o.quick)
      sizes = gpu ? std::vector<std::int64_t>{1 << 20, 1 << 26}
                  : std::vector<std::int64_t>{1 << 16, 1 << 22};
    else
      sizes = gpu ? std::vector<std::int64_t>{1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28}
                  : std::vector<std::int64_t>{1 << 10, 1 << 16, 1 << 20, 1 << 24};
  }
  std::vector<DType> dtypes =
      o.quick ? std::vector<DType>{DType::float32}
              : std::vector<DType>{DType::float32, DType::float64, DType::int32};
  if (!o.dtypes.empty()) {
    dtypes.clear();
    for (const auto& name : o.dtypes)
      dtypes.push_back(parse_dtype(name));
  }
  // The full sweep adds the statistics (var must keep up with sum: one pass, float64 moments)
  // and a nan-op to the basic ops.
  std::vector<ReduceOp> ops =
      o.quick ? std::vector<ReduceOp>{ReduceOp::sum, ReduceOp::max}
              : std::vector<ReduceOp>{ReduceOp::sum,    ReduceOp::min,          ReduceOp::max,
                                      ReduceOp::argmax, ReduceOp::mean,         ReduceOp::var,
                                      ReduceOp::nanvar, ReduceOp::count_nonzero};
  if (!o.ops.empty()) {
    ops.clear();
    for (const auto& name : o.ops)
      ops.push_back(parse_reduce_op(name));
  }
  // --axis picks the cases; by default the 1-D sizes, and the matrix with the full sweep.
  auto wanted = [&](const std::string& axis) {
    if (o.axes.empty()) return axis == "all" || (!o.quick && o.sizes.empty());
    return std::find(o.axes.begin(), o.axes.end(), axis) != o.axes.end();
  };
  std::vector<Case> cases;
  if (wanted("all"))
    for (auto t : dtypes)
      for (auto op : ops)
        for (auto n : sizes)
          cases.push_back({t, op, Axis::all, 1, n});
  std::int64_t side = gpu ? 16384 : 4096;
  if (wanted("rows")) cases.push_back({DType::float32, ReduceOp::sum, Axis::rows, side, side});
  if (wanted("cols")) cases.push_back({DType::float32, ReduceOp::sum, Axis::cols, side, side});
  return cases;
}

}  // namespace

std::vector<BenchRow> bench_reduce(const Device& device, const BenchOptions& o,
                                   const Peaks& peaks) {
  std::vector<BenchRow> rows;
  std::vector<nlohmann::json> numpy_cases;
  std::vector<std::size_t> numpy_rows;
  const bool cuda = device.backend() == Backend::cuda;
  std::uint64_t seed = 1;
  for (const Case& c : reduce_cases(device, o)) {
    ++seed;
    std::int64_t n = c.rows * c.cols;
    std::vector<std::int64_t> shape = c.axis == Axis::all
                                          ? std::vector<std::int64_t>{n}
                                          : std::vector<std::int64_t>{c.rows, c.cols};
    detail::ReduceShape rs{c.dtype, c.op, c.axis, c.rows, c.cols, c.cols};
    auto host = random_data(c.dtype, n, seed);
    DType out = reduce_result_dtype(c.dtype, c.op);
    std::int64_t outputs = rs.outputs();
    std::vector<unsigned char> expected(static_cast<std::size_t>(outputs) * dtype_size(out));
    std::vector<std::int64_t> expected_index(static_cast<std::size_t>(outputs));
    detail::reduce_reference(host.data(), rs, expected.data(), expected_index.data());

    std::size_t bytes = host.size();
    std::vector<Array> inputs;
    int copies = rotation_count(device.info(), bytes);
    for (int k = 0; k < copies; ++k)
      inputs.push_back(Array::from_host(device, c.dtype, shape, host.data()));
    Buffer values(device, expected.size()), indices(device, outputs * sizeof(std::int64_t));
    std::string label = c.axis == Axis::all
                            ? size_label(n)
                            : fmt::format("{}x{} {}", c.rows, c.cols, axis_name(c.axis));

    // The baseline, timed first, picks the case's timing method for the variants too.
    CaseTimer timer(device, o);
    double cub_ms = 0;
    if (cuda && c.axis == Axis::all) {
      cub_ms = cub_reduce_ms(device, c.dtype, c.op, inputs, timer);
    } else if (cuda && c.axis == Axis::rows) {
      cub_ms = cub_segmented_reduce_ms(device, c.dtype, c.op, inputs[0], timer);
    }

    for (const auto& v : list_variants("reduce")) {
      if (v.backend != backend_name(device.backend())) continue;
      if (!o.variants.empty() &&
          std::find(o.variants.begin(), o.variants.end(), v.name) == o.variants.end())
        continue;
      const auto& variant = detail::find_reduce_variant(device.backend(), v.name);
      if (!variant.supports(rs, device.info())) continue;
      // The serial reference is quadratic in nothing but slow; keep the sweep bounded.
      if (v.name == "serial" && device.backend() == Backend::cpu && n > (1 << 24)) continue;
      BenchRow row;
      row.pattern = "reduce";
      row.backend = v.backend;
      row.device = device.info().name;
      row.variant = v.name;
      row.dtype = dtype_name(c.dtype);
      row.op = reduce_op_name(c.op);
      row.shape = label;
      try {
        ReduceOptions ro{c.op, c.axis, v.name};
        Reducer reducer(device, c.dtype, shape, 0, ro);
        reducer.run(inputs[0], values, indices);
        std::vector<unsigned char> got(expected.size());
        std::vector<std::int64_t> got_index(static_cast<std::size_t>(outputs));
        values.download(got.data(), got.size());
        if (is_arg_op(c.op))
          indices.download(got_index.data(), got_index.size() * sizeof(std::int64_t));
        row.verified = true;
        for (std::int64_t k = 0; k < outputs && row.verified; ++k) {
          auto e = Scalar::from_bytes(out, expected.data() + k * dtype_size(out));
          auto g = Scalar::from_bytes(out, got.data() + k * dtype_size(out));
          std::string why = detail::reduce_mismatch(e, g, c.op, rs.extent());
          if (why.empty() && is_arg_op(c.op) && got_index[k] != expected_index[k])
            why = fmt::format("index {} instead of {}", got_index[k], expected_index[k]);
          if (!why.empty()) {
            row.verified = false;
            row.note = why;
          }
        }
        row.time_ms =
            timer.time_ms([&](int rep) { reducer.run(inputs[rep % copies], values, indices); });
      } catch (const Error& e) {
        row.note = e.what();
      }
      row.timing = timer.method();
      row.bytes = static_cast<double>(bytes);
      row.gbps = row.time_ms > 0 ? row.bytes / (row.time_ms * 1e6) : 0;
      row.pct_peak = peaks.read_gbps > 0 ? 100.0 * row.gbps / peaks.read_gbps : 0;
      if (cub_ms > 0) {
        row.baseline = c.axis == Axis::all ? "cub" : "cub-segmented";
        row.baseline_ms = cub_ms;
      }
      if (device.backend() == Backend::cpu) {
        numpy_cases.push_back({{"dtype", row.dtype},
                               {"op", row.op},
                               {"axis", axis_name(c.axis)},
                               {"rows", c.rows},
                               {"cols", c.cols},
                               {"seed", seed},
                               {"reps", o.reps},
                               {"copies", copies}});
        numpy_rows.push_back(rows.size());
      }
      rows.push_back(row);
      if (o.on_row) o.on_row(row);
      std::cerr << fmt::format("  reduce {:<10} {:<8} {:<7} {:<22} {:9.2f} µs {:<10} {}\n",
                               row.variant, row.dtype, row.op, row.shape, row.time_ms * 1e3,
                               row.timing, row.verified ? "" : "NOT VERIFIED " + row.note);
    }
  }
  auto times = numpy_times("reduce", numpy_cases);
  for (std::size_t k = 0; k < times.size() && k < numpy_rows.size(); ++k) {
    if (times[k] <= 0) continue;
    rows[numpy_rows[k]].baseline = "numpy";
    rows[numpy_rows[k]].baseline_ms = times[k];
  }
  return rows;
}

}  // namespace parpat::bench
