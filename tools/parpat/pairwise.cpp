// parpat pairwise --kernel product|gaussian [--h H] | --expr EXPR [--brute-force] [--tpb N]
//                 [--dump-binary FILE] [--progress] [COMMON] A.npy B.npy -o C.npy
// A is read whole; B is streamed (it may be larger than host or device memory). Under mpirun or
// with --devices the ranks split X or Y (parpat/distributed.hpp) and rank 0 writes C.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "parpat/pairwise.hpp"
#include "ranks.hpp"

namespace parpat::cli {

namespace {

// A pairwise input: a 1-D float32 .npy file.
void check_vector(const Source& s, const std::string& path, const char* name) {
  std::string shape;
  for (auto d : s.shape())
    shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  if (s.raw() || s.dtype() != DType::float32 || s.shape().size() != 1)
    throw_invalid(fmt::format("{} ({}) must be a 1-D float32 .npy array, got {}", name, path,
                              s.raw()
                                  ? std::string("raw bytes")
                                  : fmt::format("{} of shape ({})", dtype_name(s.dtype()), shape)));
}

}  // namespace

void add_pairwise_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "pairwise", "C[x] = sum over y of f(A[x], B[y]) for two 1-D float32 .npy files");
  struct Opts {
    CommonOptions common;
    StreamFlags stream;
    RankFlags ranks;
    std::string kernel, expr, a, b, out, dump;
    double h = 1.0;
    bool brute_force = false;
    int tpb = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* kernel = cmd->add_option("--kernel", o->kernel, "product (a*b) or gaussian");
  auto* expr =
      cmd->add_option("--expr", o->expr, "custom f(a, b) compiled at run time (GPU backends only)");
  kernel->excludes(expr);
  cmd->add_option("--h", o->h, "gaussian bandwidth, > 0 (default 1)");
  cmd->add_flag("--brute-force", o->brute_force,
                "product: run the all-pairs kernel instead of A[x]·sum(B)");
  cmd->add_option("--tpb", o->tpb, "threads per block (default: tuned per device)");
  cmd->add_option("--dump-binary", o->dump, "write the compiled program (PTX on NVIDIA) here");
  o->common.add_to(*cmd);
  o->stream.add_to(*cmd);
  o->ranks.add_to(*cmd);
  cmd->add_option("A", o->a, "A: 1-D float32 .npy file (X values)")->required();
  cmd->add_option("B", o->b, "B: 1-D float32 .npy file (Y values), streamed; - for standard input")
      ->required();
  cmd->add_option("-o,--output", o->out, "C: output .npy file (X float32 values)")->required();
  cmd->callback([o] {
    PairwiseOptions options;
    if (o->kernel.empty() && o->expr.empty())
      throw_invalid("pairwise needs --kernel product|gaussian or --expr EXPR");
    options.kernel =
        o->expr.empty() ? parse_pairwise_kernel(o->kernel) : PairwiseKernel::expression;
    options.expression = o->expr;
    options.h = o->h;
    options.brute_force = o->brute_force;
    options.threads_per_block = o->tpb;
    options.variant = o->common.variant;
    if (o->tpb < 0 || o->tpb > 1024) throw_invalid("--tpb must be between 1 and 1024");
    options.timed = true;  // the answer reports time_ms
    struct Answer {
      PairwiseResult r;
      StreamStats stats;
      OpenedInput input;
      RankSummary ranks;
      std::int64_t x = 0;
      std::string variant;
      int threads_per_block = 0;
      std::optional<PairwiseSplit> split;
    };
    auto answer = run_on_ranks<Answer>(o->common, o->ranks, o->b, [&](RankInput& in) {
      OpenedInput& b = *in.opened;
      Device& device = b.device;
      std::optional<Source> a;
      std::optional<Pairwise> plan;  // the variant's name and block size for the answer
      auto prepare = [&] {
        a = Source::open(o->a);
        check_vector(*a, o->a, "A");
        if (a->size() == 0) throw_invalid("A (" + o->a + ") is empty: X must be at least 1");
        check_vector(b.source, o->b, "B");
        plan.emplace(device, a->size(), b.source.size(), options);
        if (o->dump.empty() || !in.reports()) return;
        std::string binary = plan->program_binary();
        if (binary.empty())
          throw_invalid("the " + std::string(backend_name(device.backend())) +
                        " backend compiles no program to dump");
        std::ofstream file(o->dump, std::ios::binary);
        if (!(file << binary << std::flush)) throw_invalid("cannot write " + o->dump);
      };
      if (in.comm)
        on_every_rank(*in.comm, prepare);
      else
        prepare();
      StreamOptions stream = in.reports() ? o->stream.options() : StreamOptions{};
      Answer answer{
          {}, {}, b, RankSummary(in), a->size(), plan->variant(), plan->threads_per_block(), {}};
      if (in.comm) {
        answer.split = pairwise_split(a->size(), b.source.size(), in.comm->size());
        answer.r = pairwise(*a, b.source, device, *in.comm, options, stream, &answer.stats);
      } else {
        HostArray host = read_input(o->a);
        Array av = Array::from_host(device, DType::float32, host.shape, host.data.data());
        answer.r = pairwise(av, b.source, options, stream, &answer.stats);
      }
      return answer;
    });
    if (!answer) return;
    auto& [r, stats, input, ranks, x, variant, threads_per_block, split] = *answer;
    const Device& device = input.device;
    const double ms = r.time_ms;
    write_npy(o->out, DType::float32, {x}, r.c.data());
    std::string what = options.kernel == PairwiseKernel::expression ? "expression " + o->expr
                       : options.kernel == PairwiseKernel::gaussian
                           ? fmt::format("gaussian h={}", o->h)
                           : std::string("product");
    if (o->common.json) {
      nlohmann::json j = {{"pattern", "pairwise"},
                          {"kernel", pairwise_kernel_name(options.kernel)},
                          {"x", x},
                          {"y", input.source.size()},
                          {"backend", backend_name(device.backend())},
                          {"device", device.info().name},
                          {"variant", variant},
                          {"brute_force", o->brute_force},
                          {"threads_per_block", threads_per_block},
                          {"output", o->out},
                          {"time_ms", ms}};
      if (options.kernel == PairwiseKernel::gaussian) j["h"] = o->h;
      if (options.kernel == PairwiseKernel::expression) j["expression"] = o->expr;
      ranks.add_to(j);
      if (split) j["split"] = pairwise_split_name(*split);
      add_stream_json(j, stats, input.startup_ms);
      std::cout << j.dump() << "\n";
      return;
    }
    std::cout << fmt::format(
        "pairwise {} of X={} by Y={} on {} [{}{}]{}, {:.4f} ms -> {}\n", what, x,
        input.source.size(), device.label(), variant, o->brute_force ? ", brute force" : "",
        split ? ranks.text() + ", split " + pairwise_split_name(*split) : "", ms, o->out);
  });
}

}  // namespace parpat::cli
