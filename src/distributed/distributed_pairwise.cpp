// Pairwise over the ranks of a communicator, split along the longer extent (pairwise_split):
//   split x  agree on the call and open A's share → stream all of B against it → agree →
//            all-gather the float32 slices of C (each padded to the largest share)
//   split y  agree on the call, read all of A and open B's share → stream the share → agree →
//            all-gather the float64 partial C block by block, added in rank order
// Either way every rank ends with the whole C, and a failure on one rank stops all of them
// before the next collective.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <sstream>

#include "distributed/agreement.hpp"
#include "distributed/rank_steps.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "stream/chunk_input.hpp"
#include "stream/stream_internal.hpp"

namespace parpat {

namespace {

// How many x of the partial C one all-gather of split y carries: bounds its buffer to
// P × 8 MiB however long X is.
constexpr std::int64_t kPartialBlock = std::int64_t{1} << 20;

void check_vector(const detail::SourceImpl& s, const char* what) {
  if (s.dtype != DType::float32 || s.shape.size() != 1 || s.raw || s.elements() < 0)
    throw_invalid(s.name + ": pairwise takes a 1-D float32 " + what + " (.npy)");
}

// Elements [first, first + count) of `s` as a source of their own (the whole of `s` when they
// are all of it, as for one rank).
std::shared_ptr<detail::SourceImpl> open_part(detail::SourceImpl& s, std::int64_t first,
                                              std::int64_t count, int ranks) {
  if (first == 0 && count == s.elements()) return {std::shared_ptr<detail::SourceImpl>(), &s};
  if (!s.random_access())
    throw_invalid(s.name + " can only be read in order, so " + std::to_string(ranks) +
                  " ranks cannot each read a part of it (give a file)");
  return detail::open_share_source(s, first, {count});
}

std::vector<float> read_all(detail::SourceImpl& s) {
  std::vector<float> out(static_cast<std::size_t>(s.elements()));
  const std::size_t bytes = out.size() * sizeof(float);
  if (bytes && s.read_next(out.data(), bytes) != bytes)
    throw Error(ErrorKind::io, s.name + ": the input ended early");
  return out;
}

// Split y's combine: the ranks' float64 partial C added in rank order, block by block.
std::vector<float> add_partials_in_rank_order(const std::vector<double>& mine, Communicator& comm) {
  const auto x = static_cast<std::int64_t>(mine.size());
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<float> c(mine.size());
  std::vector<double> block(static_cast<std::size_t>(std::min(x, kPartialBlock)));
  std::vector<double> all(block.size() * ranks);
  for (std::int64_t first = 0; first < x; first += kPartialBlock) {
    const auto count = static_cast<std::size_t>(std::min(kPartialBlock, x - first));
    std::fill(block.begin(), block.end(), 0.0);
    std::copy_n(mine.begin() + first, count, block.begin());
    comm.all_gather(block.data(), block.size() * sizeof(double), all.data());
    for (std::size_t k = 0; k < count; ++k) {
      double sum = 0;
      for (std::size_t r = 0; r < ranks; ++r)
        sum += all[r * block.size() + k];
      c[static_cast<std::size_t>(first) + k] = static_cast<float>(sum);
    }
  }
  return c;
}

// Split x's combine: every rank's slice of C (`lengths[r]` values each, this rank's `mine` in
// float64), rounded to float32 and gathered in rank order.
std::vector<float> gather_slices(const std::vector<double>& mine,
                                 const std::vector<std::int64_t>& lengths, Communicator& comm) {
  const std::int64_t widest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<float> slice(static_cast<std::size_t>(widest), 0.0f);
  std::copy(mine.begin(), mine.end(), slice.begin());
  std::vector<float> all(static_cast<std::size_t>(widest) * lengths.size());
  comm.all_gather(slice.data(), slice.size() * sizeof(float), all.data());
  std::vector<float> c(
      static_cast<std::size_t>(std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0})));
  detail::copy_without_padding(all.data(), lengths, c.data());
  return c;
}

}  // namespace

PairwiseSplit pairwise_split(std::int64_t x, std::int64_t y, int ranks) {
  return x >= y && x >= ranks ? PairwiseSplit::x : PairwiseSplit::y;
}

const char* pairwise_split_name(PairwiseSplit split) {
  return split == PairwiseSplit::x ? "x" : "y";
}

PairwiseResult pairwise(Source& a, Source& b, const Device& device, Communicator& comm,
                        const PairwiseOptions& options, const StreamOptions& stream,
                        StreamStats* stats) {
  auto start = std::chrono::steady_clock::now();
  detail::SourceImpl& whole_a = a.impl();
  detail::SourceImpl& whole_b = b.impl();
  const std::string call = detail::pairwise_call_text(options) + " A " +
                           detail::source_signature(whole_a) + " B " +
                           detail::source_signature(whole_b);
  const std::int64_t r = comm.rank(), p = comm.size();
  PairwiseSplit split = PairwiseSplit::x;
  std::int64_t x = 0, a_first = 0;
  std::vector<float> a_host;
  std::shared_ptr<detail::SourceImpl> b_part;
  detail::step_then_agree(
      comm,
      [&] {
        check_vector(whole_a, "A");
        check_vector(whole_b, "B");
        x = whole_a.elements();
        const std::int64_t y = whole_b.elements();
        if (x == 0) throw_invalid(whole_a.name + ": A is empty, X must be at least 1");
        split = pairwise_split(x, y, comm.size());
        const std::int64_t a_last = split == PairwiseSplit::x ? x * (r + 1) / p : x;
        a_first = split == PairwiseSplit::x ? x * r / p : 0;
        a_host = read_all(*open_part(whole_a, a_first, a_last - a_first, comm.size()));
        b_part = split == PairwiseSplit::y
                     ? open_part(whole_b, y * r / p, y * (r + 1) / p - y * r / p, comm.size())
                     : open_part(whole_b, 0, y, comm.size());
      },
      detail::signature_of(call));
  StreamStats local;
  std::vector<double> mine;
  detail::step_then_agree(comm, [&] {
    const Array av = Array::from_host(device, DType::float32,
                                      {static_cast<std::int64_t>(a_host.size())}, a_host.data());
    mine = detail::pairwise_stream_sums(av, *b_part, options, stream, local);
  });
  PairwiseResult result;
  if (split == PairwiseSplit::x) {
    std::vector<std::int64_t> lengths;
    for (std::int64_t k = 0; k < p; ++k)
      lengths.push_back(x * (k + 1) / p - x * k / p);
    result.c = gather_slices(mine, lengths, comm);
  } else {
    result.c = add_partials_in_rank_order(mine, comm);
  }
  local.wall_ms = detail::ms_since(start);
  result.time_ms = local.kernel_ms;
  if (stats) *stats = local;
  return result;
}

}  // namespace parpat
