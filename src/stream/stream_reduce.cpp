// Reduce over a stream. Each chunk is reduced on the device by an ordinary Reducer (one plan per
// chunk shape, made once), and the chunk's results are folded on the host into one accumulator
// per output with the operator's own algebra (reduce_ops.hpp), in chunk order:
//   all   chunks of any length; arg indices are offset by the chunk's first element
//   rows  chunks of whole rows, each row's result its own output; a row longer than a chunk is
//         cut into pieces reduced flat and folded into that row's output
//   cols  chunks of whole rows reduced along axis cols, folded column by column (arg indices
//         offset by the chunk's first row); pieces of a long row are 1-row blocks
// Float sums add the chunks' sums in float64, so the same chunking gives the same bits.
// A rank of a distributed reduce streams its share (chunk positions offset by the share's first
// element, so rows, columns and arg indices are those of the whole input), then the ranks
// exchange their accumulators and fold them in rank order with the same algebra. A rank whose
// share is resident in device memory adds it as one chunk (ShareReducer, kept for repeated
// calls).
#include <cstring>
#include <limits>
#include <map>

#include "distributed/agreement.hpp"
#include "io/source.hpp"
#include "parpat/error.hpp"
#include "reduce/axes.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "stream/chunk_input.hpp"
#include "stream/stream_internal.hpp"

namespace parpat {

namespace detail {

namespace {

// One chunk's job: the array shape and axis its plan takes, and where its results go.
struct ChunkJob {
  std::vector<std::int64_t> shape;
  Axis axis = Axis::all;
  std::int64_t output = 0;      // first output its results fold into
  std::int64_t index_base = 0;  // added to its arg indices
};

class StreamReducer {
 public:
  // `shape` is the whole input's; the chunks start `base` elements into it.
  StreamReducer(const Device& device, DType dtype, std::vector<std::int64_t> shape,
                std::vector<ReduceOptions> ops, std::int64_t base = 0)
      : device_(device),
        dtype_(dtype),
        shape_(std::move(shape)),
        ops_(std::move(ops)),
        base_(static_cast<std::uint64_t>(base)) {
    rows_ = shape_.size() == 2 ? shape_[0] : 1;
    cols_ = shape_.back();
    axis_ = ops_.front().axis;
    outputs_ = axis_ == Axis::all ? 1 : (axis_ == Axis::rows ? rows_ : cols_);
    for (const auto& o : ops_)
      states_.push_back({o, reduce_result_dtype(dtype_, o.op), {}});
    reset();
  }

  // Every accumulator back to its op's identity (the plans and buffers stay for the next input).
  void reset() {
    for (auto& st : states_)
      visit_dtype(dtype_, [&](auto t) {
        using T = decltype(t);
        visit_reduce_op<T>(st.options.op, [&](auto op) {
          using Acc = typename decltype(op)::Acc;
          const Acc identity = decltype(op)::identity();
          if (st.acc) {  // a repeated run: the accumulators' memory is kept
            static_cast<std::vector<Acc>*>(st.acc.get())
                ->assign(static_cast<std::size_t>(outputs_), identity);
            return;
          }
          st.acc = std::shared_ptr<void>(
              new std::vector<Acc>(static_cast<std::size_t>(outputs_), identity),
              [](void* p) { delete static_cast<std::vector<Acc>*>(p); });
        });
      });
  }

  // Elements of the chunk that starts at `first`, for chunks of at most `most` elements.
  std::int64_t cut(std::uint64_t first, std::int64_t most) const {
    if (axis_ == Axis::all || shape_.size() == 1) return most;
    first += base_;
    if (cols_ <= most) return most / cols_ * cols_;
    std::int64_t col = static_cast<std::int64_t>(first % static_cast<std::uint64_t>(cols_));
    return std::min(most, cols_ - col);
  }

  // Makes the plans of the chunk `range` (their first use loads the kernels' code, which then
  // overlaps the staging's allocation).
  void prepare(const HostChunk& range) {
    ChunkJob job = job_of(range);
    for (auto& st : states_)
      plan_for(st, job);
  }

  void add(ChunkInput& input, const HostChunk& chunk, double& kernel_ms) {
    ChunkJob job = job_of(chunk);
    add(input.array(chunk, job.shape), job, kernel_ms);
  }

  // A rank's resident share (contiguous, in device memory) as one chunk of whole rows.
  void add_resident(const Array& share, double& kernel_ms) {
    ChunkJob job = job_of({nullptr, 0, share.size()});
    add(Array::view(share.buffer(), dtype_, job.shape), job, kernel_ms);
  }

  void add(const Array& in, const ChunkJob& job, double& kernel_ms) {
    for (auto& st : states_) {
      ReduceKernel& plan = plan_for(st, job);
      const auto outputs = static_cast<std::size_t>(job_shape(st, job).outputs());
      ensure(values_, outputs * chunk_value_bytes(st));
      ensure(indices_, is_arg_op(st.options.op) ? outputs * sizeof(std::int64_t) : 0);
      if (st.options.timed) device_.impl().timer_start(TimerMode::events_only);
      plan.run(in.buffer(), values_, indices_);
      if (st.options.timed) kernel_ms += device_.impl().timer_stop_ms();
      raw_values_.resize(outputs * chunk_value_bytes(st));
      values_.download(raw_values_.data(), raw_values_.size());
      raw_indices_.assign(is_arg_op(st.options.op) ? outputs : 0, 0);
      if (!raw_indices_.empty())
        indices_.download(raw_indices_.data(), outputs * sizeof(std::int64_t));
      fold(st, job, outputs);
    }
  }

  // Every rank's accumulators, folded in rank order into this rank's (all ranks end equal).
  void combine_ranks(Communicator& comm) {
    for (auto& st : states_) {
      visit_dtype(dtype_, [&](auto t) {
        using T = decltype(t);
        visit_reduce_op<T>(st.options.op, [&](auto op) {
          using Op = decltype(op);
          using Acc = typename Op::Acc;
          auto& acc = *static_cast<std::vector<Acc>*>(st.acc.get());
          const std::size_t bytes = acc.size() * sizeof(Acc);
          std::vector<unsigned char> mine(bytes);
          for (std::size_t o = 0; o < acc.size(); ++o) {
            const Acc a = acc[o];
            std::memcpy(mine.data() + o * sizeof(Acc), &a, sizeof(Acc));
          }
          std::vector<unsigned char> all = comm.all_gather(mine.data(), bytes);
          for (std::size_t o = 0; o < acc.size(); ++o) {
            Acc folded = Op::identity();
            for (int r = 0; r < comm.size(); ++r) {
              Acc a = Op::identity();
              std::memcpy(&a, all.data() + static_cast<std::size_t>(r) * bytes + o * sizeof(Acc),
                          sizeof(Acc));
              folded = Op::combine(folded, a);
            }
            acc[o] = folded;
          }
        });
      });
    }
  }

  std::vector<ReduceResult> results() const {
    std::vector<ReduceResult> out;
    for (const auto& st : states_) {
      ReduceResult r;
      r.dtype = st.result;
      visit_dtype(dtype_, [&](auto t) {
        using T = decltype(t);
        visit_reduce_op<T>(st.options.op, [&](auto op) {
          using Op = decltype(op);
          const auto& acc = *static_cast<const std::vector<typename Op::Acc>*>(st.acc.get());
          if constexpr (is_moments_op<Op>::value) {
            std::vector<unsigned char> raw(acc.size() * dtype_size(st.result));
            write_statistics(acc.data(), st.options.op, st.options.ddof, st.result,
                             static_cast<std::int64_t>(acc.size()), raw.data());
            for (std::size_t o = 0; o < acc.size(); ++o)
              r.values.push_back(
                  Scalar::from_bytes(st.result, raw.data() + o * dtype_size(st.result)));
          } else {
            for (const auto& a : acc) {
              typename Op::Result v = Op::result(a);
              r.values.push_back(Scalar::from_bytes(st.result, &v));
              if constexpr (is_arg_pair<typename Op::Acc>::value) r.indices.push_back(a.index);
            }
          }
        });
      });
      check_nan_arg_found(st.options.op, r.indices);
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  struct State {
    ReduceOptions options;
    DType result;
    std::shared_ptr<void> acc;  // std::vector<Op::Acc>, one per output
  };

  ChunkJob job_of(const HostChunk& c) const {
    ChunkJob job;
    const auto first = static_cast<std::int64_t>(c.first + base_);
    if (axis_ == Axis::all || shape_.size() == 1) {
      job.shape = {c.elements};
      job.index_base = first;
      return job;
    }
    const std::int64_t row = first / cols_, col = first % cols_;
    if (col == 0 && c.elements % cols_ == 0) {  // whole rows
      job.shape = {c.elements / cols_, cols_};
      job.axis = axis_;
      job.output = axis_ == Axis::rows ? row : 0;
      job.index_base = axis_ == Axis::rows ? 0 : row;
      return job;
    }
    // A piece of one long row.
    if (axis_ == Axis::rows) {
      job.shape = {c.elements};
      job.output = row;
      job.index_base = col;
    } else {
      job.shape = {1, c.elements};
      job.axis = Axis::cols;
      job.output = col;
      job.index_base = row;
    }
    return job;
  }

  // The shape a chunk's kernel reduces: moment ops report their Moments, to be merged here.
  ReduceShape job_shape(const State& st, const ChunkJob& job) const {
    ReduceShape s;
    s.dtype = dtype_;
    s.op = st.options.op;
    s.axis = job.axis;
    s.rows = job.shape.size() == 2 ? job.shape[0] : 1;
    s.cols = job.shape.back();
    s.row_stride = s.cols;
    s.ddof = st.options.ddof;
    s.raw_moments = true;
    return s;
  }

  std::size_t chunk_value_bytes(const State& st) const {
    return statistic_of(st.options.op) ? sizeof(Moments) : dtype_size(st.result);
  }

  ReduceKernel& plan_for(const State& st, const ChunkJob& job) {
    auto key =
        std::make_pair(job.shape, static_cast<int>(st.options.op) * 3 + static_cast<int>(job.axis));
    auto it = plans_.find(key);
    if (it == plans_.end())
      it = plans_.emplace(key, make_reduce_kernel(device_, job_shape(st, job), st.options.variant))
               .first;
    return *it->second;
  }

  void fold(State& st, const ChunkJob& job, std::size_t outputs) {
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      visit_reduce_op<T>(st.options.op, [&](auto op) {
        using Op = decltype(op);
        using R = typename Op::Result;
        auto& acc = *static_cast<std::vector<typename Op::Acc>*>(st.acc.get());
        const auto* values = reinterpret_cast<const R*>(raw_values_.data());
        for (std::size_t k = 0; k < outputs; ++k) {
          auto&& a = acc[static_cast<std::size_t>(job.output) + k];
          if constexpr (is_arg_pair<typename Op::Acc>::value) {
            // A chunk whose elements are all NaN (nan arg ops) found no index.
            const std::int64_t none = std::numeric_limits<std::int64_t>::max();
            const std::int64_t i =
                raw_indices_[k] == none ? none : raw_indices_[k] + job.index_base;
            using V = decltype(a.value);  // float for the 16-bit floats, else the element
            a = Op::combine(a, {static_cast<V>(values[k]), i});
          } else {
            a = Op::combine(a, static_cast<typename Op::Acc>(values[k]));
          }
        }
      });
    });
  }

  void ensure(Buffer& b, std::size_t bytes) {
    if (b.bytes() < std::max<std::size_t>(bytes, 1))
      b = Buffer(device_, std::max<std::size_t>(bytes, 1));
  }

  Device device_;
  DType dtype_;
  std::vector<std::int64_t> shape_;
  std::vector<ReduceOptions> ops_;
  std::uint64_t base_ = 0;
  std::int64_t rows_ = 1, cols_ = 0, outputs_ = 1;
  Axis axis_ = Axis::all;
  std::vector<State> states_;
  std::map<std::pair<std::vector<std::int64_t>, int>, std::unique_ptr<ReduceKernel>> plans_;
  Buffer values_, indices_;
  std::vector<unsigned char> raw_values_;
  std::vector<std::int64_t> raw_indices_;
};

// A source of unknown length (raw standard input) is a 1-D input of which only the whole can
// be reduced (rows and cols: "needs 2-D input").
void check_unknown_length(const SourceImpl& source, const ReduceOptions& o) {
  if (reduced_axes(1, o) != std::vector<int>{0})
    throw_invalid(source.name + " has no shape, so only axis all applies");
}

// Axes that need a gather: the whole input in device memory (read in order through a bounded
// host buffer), then the in-memory reduce.
std::vector<ReduceResult> reduce_in_device_memory(SourceImpl& source, const Device& device,
                                                  const std::vector<ReduceOptions>& ops,
                                                  const StreamOptions& stream, StreamStats& stats,
                                                  int pass, int passes) {
  const std::uint64_t bytes = source.data_bytes();
  if (2 * bytes > device.info().global_memory)
    throw_invalid(source.name + ": these axes interleave reduced and kept ones, which needs the " +
                  "input and a gathered copy in device memory (" + std::to_string(2 * bytes) +
                  " bytes), more than " + device.label() + " has (" +
                  std::to_string(device.info().global_memory) +
                  "); axes that leave the reduced ones together stream any size");
  Buffer data(device, static_cast<std::size_t>(bytes));
  constexpr std::uint64_t kPiece = std::uint64_t{64} << 20;
  std::vector<unsigned char> staging(static_cast<std::size_t>(std::min(bytes, kPiece)));
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = static_cast<std::size_t>(std::min(bytes - done, kPiece));
    auto start = std::chrono::steady_clock::now();
    if (source.read_next(staging.data(), piece) != piece)
      throw Error(ErrorKind::io, source.name + ": the input ended early");
    stats.read_ms += ms_since(start);
    start = std::chrono::steady_clock::now();
    data.upload(staging.data(), piece, static_cast<std::size_t>(done));
    if (device.backend() != Backend::cpu) stats.transfer_ms += ms_since(start);
    done += piece;
    if (stream.progress) stream.progress({done, bytes, pass, passes});
  }
  stats.bytes += bytes;
  stats.chunks += 1;
  const Array whole = Array::view(data, source.dtype, source.shape);
  std::vector<ReduceResult> out;
  for (const auto& o : ops) {
    out.push_back(reduce(whole, o));
    stats.kernel_ms += out.back().time_ms;
  }
  return out;
}

// Streams every element of `source` through `reducer`; returns the bytes read.
std::uint64_t read_share(SourceImpl& source, const Device& device, StreamReducer& reducer,
                         const StreamOptions& stream, StreamStats& stats, int pass, int passes) {
  const std::int64_t n = source.elements();
  PipelineOptions p = pipeline_options(device, source, stream);
  const std::int64_t most = static_cast<std::int64_t>(p.chunk_bytes / dtype_size(source.dtype));
  ChunkInput input(device, source.dtype, p.chunk_bytes);
  const std::int64_t first_chunk = reducer.cut(0, most);
  auto pipeline_owner = make_pipeline_meanwhile(source, device, p, [&] {
    reducer.prepare({nullptr, 0, n < 0 ? first_chunk : std::min(first_chunk, n)});
  });
  ChunkPipeline& pipeline = *pipeline_owner;
  std::uint64_t done = 0;
  pipeline.run([&](std::uint64_t first) { return reducer.cut(first, most); },
               [&](const HostChunk& chunk) {
                 reducer.add(input, chunk, stats.kernel_ms);
                 done += static_cast<std::uint64_t>(chunk.elements) * dtype_size(source.dtype);
                 if (stream.progress)
                   stream.progress({done, n < 0 ? 0 : source.data_bytes(), pass, passes});
               },
               [&](const HostChunk& chunk) { input.stage(chunk); });
  stats.bytes += done;
  stats.chunks += pipeline.chunks();
  stats.read_ms += pipeline.read_ms();
  stats.transfer_ms += input.transfer_ms();
  return done;
}

// Nothing to read: what the in-memory call answers for an empty array (identities, or the
// empty-input error).
std::vector<ReduceResult> reduce_empty(const Device& device, DType dtype,
                                       const std::vector<std::int64_t>& shape,
                                       const std::vector<ReduceOptions>& ops) {
  std::vector<ReduceResult> out;
  Array empty(device, dtype, shape);
  for (const auto& o : ops)
    out.push_back(reduce(empty, o));
  return out;
}

}  // namespace

StreamedReduce streamed_reduce(const std::vector<std::int64_t>& shape,
                               std::vector<ReduceOptions> ops) {
  for (const auto& o : ops) {  // every op's axes are checked; they share the first one's plan
    check_ddof(o.ddof);
    plan_reduce_axes(shape, {}, o, false);
  }
  const AxesPlan plan = plan_reduce_axes(shape, {}, ops.front(), false);
  StreamedReduce out;
  out.result_shape = plan.result_shape;
  out.streams = !plan.gathers;
  out.shape = plan.axis == Axis::all ? std::vector<std::int64_t>{plan.rows * plan.cols}
                                     : std::vector<std::int64_t>{plan.rows, plan.cols};
  for (auto& o : ops) {
    o.axis = plan.axis;
    o.axes.reset();
    o.keepdims = false;
  }
  out.ops = std::move(ops);
  return out;
}

std::vector<ReduceResult> reduce_stream(SourceImpl& source, const Device& device,
                                        const std::vector<ReduceOptions>& ops,
                                        const StreamOptions& stream, StreamStats& stats, int pass,
                                        int passes, const RankShare* share) {
  const std::vector<std::int64_t>& whole_shape = share ? share->whole_shape : source.shape;
  const std::int64_t n = source.elements();
  if (n < 0)
    for (const auto& o : ops)
      check_unknown_length(source, o);
  std::int64_t whole = 1;
  for (auto d : whole_shape)
    whole *= d;
  if (whole == 0) return reduce_empty(device, source.dtype, whole_shape, ops);
  StreamedReduce plan{whole_shape, ops, {}, true};
  if (n < 0) {
    plan = streamed_reduce({1}, ops);
  } else if (!share) {
    plan = streamed_reduce(whole_shape, ops);
    if (!plan.streams)
      return reduce_in_device_memory(source, device, ops, stream, stats, pass, passes);
  }
  StreamReducer reducer(device, source.dtype, plan.shape, plan.ops, share ? share->first : 0);
  std::exception_ptr failed;
  std::uint64_t done = 0;
  try {
    if (n != 0) done = read_share(source, device, reducer, stream, stats, pass, passes);
  } catch (...) {
    if (!share) throw;
    failed = std::current_exception();
  }
  if (share) {
    agree(*share->comm, failed);
    reducer.combine_ranks(*share->comm);
  } else if (done == 0) {
    return reduce_empty(device, source.dtype, {0}, ops);  // unknown length that was empty
  }
  std::vector<ReduceResult> out = reducer.results();
  for (auto& r : out)
    r.shape = plan.result_shape;
  return out;
}

struct ShareReducer::Impl {
  StreamReducer reducer;
};

ShareReducer::ShareReducer(const Device& device, DType dtype, const RankShare& rank,
                           const std::vector<ReduceOptions>& ops)
    : comm_(rank.comm) {
  std::int64_t whole = 1;
  for (auto d : rank.whole_shape)
    whole *= d;
  if (whole == 0)
    empty_ = reduce_empty(device, dtype, rank.whole_shape, ops);
  else
    impl_.reset(new Impl{StreamReducer(device, dtype, rank.whole_shape, ops, rank.first)});
}

ShareReducer::~ShareReducer() = default;

std::vector<ReduceResult> ShareReducer::run(const Array& share, double& kernel_ms,
                                            const std::function<void()>& check) {
  if (!impl_) {
    step_then_agree(*comm_, check);
    return empty_;
  }
  impl_->reducer.reset();
  step_then_agree(*comm_, [&] {
    check();
    if (share.size() != 0) impl_->reducer.add_resident(share, kernel_ms);
  });
  impl_->reducer.combine_ranks(*comm_);
  return impl_->reducer.results();
}

}  // namespace detail

ReduceResult reduce(Source& source, const Device& device, const ReduceOptions& options,
                    const StreamOptions& stream, StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  StreamStats local;
  ReduceResult r =
      detail::reduce_stream(source.impl(), device, {options}, stream, local, 1, 1).front();
  local.wall_ms = detail::ms_since(start);
  r.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return r;
}

}  // namespace parpat
