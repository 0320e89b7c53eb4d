// One array given in parts (parpat.Parts): on several devices of this process, one thread per
// part, each a rank of device_communicators (NCCL over distinct CUDA devices, else threads); or
// this process's one part of an array spread over the ranks of an outer communicator (an mpi4py
// one, through PythonCommunicator). Each rank runs the resident reduce or histogram of
// parpat/distributed.hpp on its part, and rank 0's answer (every rank's, for an outer
// communicator), the whole array's, comes back to Python. Each part is read where it lives (a CUDA
// array on its GPU, host memory on the device named for it) once the caller's streams have produced
// it.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "histogramdd_call.hpp"
#include "memory.hpp"
#include "parpat/parpat.hpp"

namespace parpat::python {

namespace nb = nanobind;

// The parts as Python describes them: a device, a pointer (host or of that device), the stream
// that produces it and a shape each, one dtype for all.
struct PartsInput {
  std::vector<Device> devices;
  std::vector<std::uintptr_t> pointers;
  std::vector<bool> host;
  std::vector<std::uintptr_t> streams;
  std::vector<std::vector<std::int64_t>> shapes;
  DType dtype = DType::float32;
};

// Runs `work(part, comm)` without the GIL and returns rank 0's answer: with an `outer`
// communicator on this thread for the one part, else on one thread per part. An error on any
// rank is every rank's (distributed.hpp), rethrown here.
template <class Answer, class Work>
Answer on_parts(const PartsInput& in, Communicator* outer, Work work) {
  const std::size_t ranks = in.devices.size();
  if (ranks == 0) throw_invalid("Parts needs at least one array");
  if (in.pointers.size() != ranks || in.host.size() != ranks || in.streams.size() != ranks ||
      in.shapes.size() != ranks)
    throw_invalid("Parts: one device, pointer, stream and shape per part");
  if (outer && ranks != 1)
    throw_invalid("Parts with a communicator takes this process's one part, not " +
                  std::to_string(ranks));
  nb::gil_scoped_release unlocked;
  for (std::size_t k = 0; k < ranks; ++k)
    if (!in.host[k] && in.devices[k].backend() != Backend::cpu)
      in.devices[k].synchronize(stream_of(in.streams[k]));
  auto part = [&](std::size_t k) {
    return input_array(in.devices[k], {in.pointers[k], in.host[k]}, in.dtype, in.shapes[k]);
  };
  if (outer) return work(part(0), *outer);
  std::optional<Answer> answer;
  on_ranks(device_communicators(in.devices), [&](Communicator& comm) {
    Answer a = work(part(static_cast<std::size_t>(comm.rank())), comm);
    if (comm.rank() == 0) answer = std::move(a);
  });
  return std::move(*answer);
}

// numpy's reduction of the stacked parts: (values as Python numbers, int64 indices of an arg
// op, the result's shape).
inline nb::tuple reduce_parts(const PartsInput& in, Communicator* outer, const std::string& op,
                              std::optional<std::vector<int>> axes, bool keepdims, double ddof,
                              const std::string& variant) {
  ReduceOptions options;
  options.op = parse_reduce_op(op);
  options.axes = std::move(axes);
  options.keepdims = keepdims;
  options.ddof = ddof;
  options.variant = variant;
  const ReduceResult r = on_parts<ReduceResult>(
      in, outer,
      [&](const Array& part, Communicator& comm) { return reduce(part, comm, options); });
  nb::list values;
  for (const Scalar& v : r.values) {
    if (is_float(v.dtype))
      values.append(nb::float_(v.f));
    else if (is_signed_integer(v.dtype))
      values.append(nb::int_(v.i));
    else
      values.append(nb::int_(v.u));
  }
  return nb::make_tuple(values, numpy_array(r.indices), r.shape);
}

// numpy.histogram of the stacked parts (flattened): (the uint64 counts, the float64 edges,
// [below, above, NaN]).
inline nb::tuple histogram_parts(const PartsInput& in, Communicator* outer, const std::string& kind,
                                 std::int64_t count, bool has_range, double lo, double hi,
                                 std::vector<double> edges, const std::string& variant) {
  const HistogramBins bins = bins_of(kind, count, has_range, lo, hi, std::move(edges));
  HistogramOptions options;
  options.variant = variant;
  HistogramResult r = on_parts<HistogramResult>(
      in, outer,
      [&](const Array& part, Communicator& comm) { return histogram(part, comm, bins, options); });
  return nb::make_tuple(numpy_array(std::move(r.counts)), numpy_array(r.bins.edge_values()),
                        numpy_array(std::vector<std::uint64_t>{r.underflow, r.overflow, r.nan}));
}

}  // namespace parpat::python
