// What the streamed commands (reduce, histogram) share: opening the input and the device at once,
// the progress bar, and the timing fields of the JSON answer.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <future>

#include "commands.hpp"

namespace parpat::cli {

namespace {

const std::chrono::steady_clock::time_point process_start = std::chrono::steady_clock::now();

}  // namespace

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double process_ms() {
  return ms_since(process_start);
}

void StreamFlags::add_to(CLI::App& app) {
  app.add_flag("--progress,!--no-progress", progress,
               "a progress bar on stderr for work past a second (default: when stderr is a "
               "terminal)");
}

OpenedInput open_input(const CommonOptions& common, const std::string& file) {
  // The device's start-up (a CUDA context takes about half a second) overlaps the opening of
  // the input and the reading of its header.
  auto begin = std::chrono::steady_clock::now();
  auto device = std::async(std::launch::async, [&common, begin] {
    Device d = common.open_device();
    return std::make_pair(d, ms_since(begin));
  });
  std::optional<Source> source;
  try {
    source = common.open_source(file);
  } catch (...) {
    device.wait();
    throw;
  }
  auto [d, startup] = device.get();
  return {std::move(*source), d, startup};
}

StreamOptions StreamFlags::options() const {
  StreamOptions o;
  const bool show = progress ? *progress : ::isatty(STDERR_FILENO) == 1;
  if (!show) return o;
  auto start = std::chrono::steady_clock::now();
  auto shown = std::make_shared<bool>(false);
  o.progress = [start, shown](const StreamProgress& p) {
    double s = ms_since(start) / 1e3;
    const bool last = p.bytes_total && p.bytes_done >= p.bytes_total && p.pass == p.passes;
    if (s < 1.0 && !*shown) return;
    *shown = true;
    double rate = s > 0 ? p.bytes_done / s / 1e9 : 0;
    std::string line;
    if (p.bytes_total) {
      double f = static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total);
      int filled = static_cast<int>(f * 30);
      double eta = rate > 0 ? (p.bytes_total - p.bytes_done) / (rate * 1e9) : 0;
      line = fmt::format("[{}{}] {:3.0f}%  {:.2f} GB/s  ETA {:.0f} s", std::string(filled, '#'),
                         std::string(30 - filled, '.'), f * 100, rate, eta);
    } else {
      line = fmt::format("{:.2f} GB  {:.2f} GB/s", p.bytes_done / 1e9, rate);
    }
    if (p.passes > 1) line = fmt::format("pass {}/{} ", p.pass, p.passes) + line;
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), last ? "\r\033[K" : "");
    std::fflush(stderr);
  };
  return o;
}

void add_stream_json(nlohmann::json& j, const StreamStats& s, double startup_ms) {
  j["wall_ms"] = process_ms();
  j["startup_ms"] = startup_ms;
  j["read_GBps"] = s.read_GBps();
  j["transfer_GBps"] = s.transfer_GBps();
  j["chunks"] = s.chunks;
  j["passes"] = s.passes;
}

}  // namespace parpat::cli
