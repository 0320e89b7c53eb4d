// Pairwise with B streamed: A stays on the device, each chunk of B runs an ordinary Pairwise plan
// (one per chunk length, made once) into a device C, and the chunks' C are added on the host in
// float64, in chunk order, so the answer is within the pattern's tolerance of the in-memory
// call's and the same chunking gives the same bits.
#include <map>

#include "io/source.hpp"
#include "parpat/error.hpp"
#include "stream/chunk_input.hpp"
#include "stream/stream_internal.hpp"

namespace parpat {

namespace detail {

std::vector<double> pairwise_stream_sums(const Array& a, SourceImpl& s,
                                         const PairwiseOptions& options,
                                         const StreamOptions& stream, StreamStats& local) {
  if (a.dtype() != DType::float32 || a.ndim() != 1) throw_invalid("pairwise takes a 1-D float32 A");
  if (s.dtype != DType::float32 || s.shape.size() != 1 || s.shape[0] < 0)
    throw_invalid(s.name + ": pairwise takes a 1-D float32 B (.npy)");
  const Device device = a.device();
  std::vector<double> sum(static_cast<std::size_t>(a.size()), 0.0);
  std::vector<float> chunk_c(sum.size());
  Array c(device, DType::float32, {a.size()});
  if (s.elements() == 0) {
    Pairwise plan(device, a.size(), 0, options);
    plan.run(a, Array(device, DType::float32, {0}), c);
    c.download(chunk_c.data());
    sum.assign(chunk_c.begin(), chunk_c.end());
  } else {
    PipelineOptions p = pipeline_options(device, s, stream);
    const auto most = static_cast<std::int64_t>(p.chunk_bytes / sizeof(float));
    std::map<std::int64_t, Pairwise> plans;  // by chunk length
    auto plan_for = [&](std::int64_t y) -> Pairwise& {
      auto it = plans.find(y);
      if (it == plans.end()) it = plans.emplace(y, Pairwise(device, a.size(), y, options)).first;
      return it->second;
    };
    ChunkInput input(device, DType::float32, p.chunk_bytes);
    auto pipeline = make_pipeline_meanwhile(
        s, device, p, [&] { plan_for(std::min<std::int64_t>(most, s.elements())); });
    std::uint64_t done = 0;
    pipeline->run([most](std::uint64_t) { return most; },
                  [&](const HostChunk& chunk) {
                    Array bv = input.array(chunk, {chunk.elements});
                    Pairwise& plan = plan_for(chunk.elements);
                    if (options.timed) device.impl().timer_start(TimerMode::events_only);
                    plan.run(a, bv, c);
                    if (options.timed) local.kernel_ms += device.impl().timer_stop_ms();
                    c.download(chunk_c.data());
                    for (std::size_t x = 0; x < sum.size(); ++x)
                      sum[x] += chunk_c[x];
                    done += static_cast<std::uint64_t>(chunk.elements) * sizeof(float);
                    if (stream.progress) stream.progress({done, s.data_bytes(), 1, 1});
                  },
                  [&](const HostChunk& chunk) { input.stage(chunk); });
    local.bytes += done;
    local.chunks += pipeline->chunks();
    local.read_ms += pipeline->read_ms();
    local.transfer_ms += input.transfer_ms();
  }
  return sum;
}

}  // namespace detail

PairwiseResult pairwise(const Array& a, Source& b, const PairwiseOptions& options,
                        const StreamOptions& stream, StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  StreamStats local;
  const std::vector<double> sum = detail::pairwise_stream_sums(a, b.impl(), options, stream, local);
  PairwiseResult result;
  result.c.assign(sum.begin(), sum.end());
  local.wall_ms = detail::ms_since(start);
  result.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return result;
}

}  // namespace parpat
