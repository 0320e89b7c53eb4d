#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "runtime/backends.hpp"

namespace parpat::cli {

void CommonOptions::add_to(CLI::App& app, bool with_variant) {
  app.add_option("--backend", backend, "cpu, cuda or opencl (default: the fastest present)");
  app.add_option("--device", device, "device index within the backend (see `parpat info`)")
      ->check(CLI::NonNegativeNumber);
  if (with_variant) app.add_option("--variant", variant, "variant name (see `parpat list`)");
  app.add_flag("--json", json, "print one JSON object");
  app.add_flag("--verbose", verbose, "print OpenCL / NVRTC build logs");
}

void CommonOptions::add_raw_dtype_to(CLI::App& app) {
  app.add_option("--dtype", raw_dtype,
                 "read a raw input as this dtype (bool, int8 ... uint64, float16, bfloat16, "
                 "float32, float64), this machine's byte order, as numpy.fromfile");
}

Source CommonOptions::open_source(const std::string& file) const {
  Source source = Source::open(file);
  if (!raw_dtype.empty()) source.read_raw_as(parse_dtype(raw_dtype));
  return source;
}

Device CommonOptions::open_device() const {
  detail::set_verbose(verbose);
  if (backend.empty()) {
    if (device >= 0) throw_invalid("--device needs --backend");
    return Device::best();
  }
  return Device::open(parse_backend(backend), device < 0 ? 0 : device);
}

nlohmann::json to_json(const Scalar& s) {
  if (s.dtype == DType::boolean) return s.u != 0;
  if (is_float(s.dtype)) {
    if (std::isnan(s.f)) return "nan";
    if (std::isinf(s.f)) return s.f > 0 ? "inf" : "-inf";
    // The shortest text of the value in its own dtype, so float32 0.1 prints as 0.1. strtod,
    // not stod, which refuses a float64 subnormal as out of range.
    return std::strtod(s.to_string().c_str(), nullptr);
  }
  if (is_signed_integer(s.dtype)) return s.i;
  return s.u;
}

nlohmann::json device_json(const Device& d) {
  return d.label();
}

std::string launch_floor(const Peaks& p) {
  std::string out = fmt::format("empty launch {:.2f} µs", p.launch_us);
  if (p.graph_launch_us > 0) out += fmt::format(" (in a graph {:.2f} µs)", p.graph_launch_us);
  return out;
}

std::string barrier_floor(const bench::BarrierFloor& p) {
  return fmt::format("release fence {:.3f} µs, L2 round trip {:.3f} µs", p.release_fence_us,
                     p.l2_round_trip_us);
}

std::vector<double> read_edges(const std::string& path) {
  const HostArray e = read_input(path);
  if (e.shape.size() != 1 || e.dtype == DType::boolean)
    throw_invalid(fmt::format("--edges needs a 1-D array of numbers, {} holds {} of shape ({})",
                              path, dtype_name(e.dtype), fmt::join(e.shape, ", ")));
  std::vector<double> edges(static_cast<std::size_t>(e.size()));
  visit_dtype(e.dtype, [&](auto t) {
    using T = decltype(t);
    constexpr std::int64_t kExact = std::int64_t{1} << 53;  // every integer to here is a double
    const T* values = e.as<T>();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const bool exact = std::is_signed_v<T> ? values[i] >= -kExact && values[i] <= kExact
                                               : values[i] <= static_cast<std::uint64_t>(kExact);
        if (!exact)
          throw_invalid(
              fmt::format("--edges: {} has edge {}, beyond the integers float64 holds "
                          "exactly (2^53)",
                          path, values[i]));
        edges[i] = static_cast<double>(values[i]);
      } else if constexpr (std::is_same_v<T, double>) {
        edges[i] = values[i];
      } else {  // float32, float16, bfloat16: exactly as float, then as double
        edges[i] = static_cast<double>(static_cast<float>(values[i]));
      }
    }
  });
  return edges;
}

}  // namespace parpat::cli
