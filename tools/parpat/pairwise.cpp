// parpat pairwise --kernel product|gaussian [--h H] | --expr EXPR [--brute-force] [--tpb N]
//                 [--dump-binary FILE] [--progress] [COMMON] A.npy B.npy -o C.npy
// A is read whole; B is streamed (it may be larger than host or device memory).
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "parpat/io.hpp"
#include "parpat/pairwise.hpp"

namespace parpat::cli {

namespace {

// A pairwise input: a 1-D float32 .npy file.
HostArray read_vector(const std::string& path, const char* name) {
  HostArray h = read_input(path);
  std::string shape;
  for (auto d : h.shape)
    shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  if (h.dtype != DType::float32 || h.shape.size() != 1)
    throw_invalid(fmt::format("{} ({}) must be a 1-D float32 .npy array, got {} of shape ({})",
                              name, path, dtype_name(h.dtype), shape));
  return h;
}

}  // namespace

void add_pairwise_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "pairwise", "C[x] = sum over y of f(A[x], B[y]) for two 1-D float32 .npy files");
  struct Opts {
    CommonOptions common;
    StreamFlags stream;
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
    HostArray a = read_vector(o->a, "A");
    if (a.size() == 0) throw_invalid("A (" + o->a + ") is empty: X must be at least 1");
    OpenedInput b = open_input(o->common, o->b);
    Device& device = b.device;
    if (b.source.dtype() != DType::float32 || b.source.shape().size() != 1 || b.source.raw())
      throw_invalid(fmt::format("B ({}) must be a 1-D float32 .npy array, got {}{}", o->b,
                                b.source.raw() ? "raw bytes" : dtype_name(b.source.dtype()),
                                b.source.raw() || b.source.shape().size() == 1
                                    ? ""
                                    : fmt::format(" of {}-D shape", b.source.shape().size())));
    Pairwise plan(device, a.size(), b.source.size(), options);
    if (!o->dump.empty()) {
      std::string binary = plan.program_binary();
      if (binary.empty())
        throw_invalid("the " + std::string(backend_name(device.backend())) +
                      " backend compiles no program to dump");
      std::ofstream file(o->dump, std::ios::binary);
      if (!(file << binary << std::flush)) throw_invalid("cannot write " + o->dump);
    }
    Array av = Array::from_host(device, DType::float32, a.shape, a.data.data());
    StreamStats stats;
    PairwiseResult r = pairwise(av, b.source, options, o->stream.options(), &stats);
    const double ms = r.time_ms;
    write_npy(o->out, DType::float32, a.shape, r.c.data());
    std::string what = options.kernel == PairwiseKernel::expression ? "expression " + o->expr
                       : options.kernel == PairwiseKernel::gaussian
                           ? fmt::format("gaussian h={}", o->h)
                           : std::string("product");
    if (o->common.json) {
      nlohmann::json j = {{"pattern", "pairwise"},
                          {"kernel", pairwise_kernel_name(options.kernel)},
                          {"x", a.size()},
                          {"y", b.source.size()},
                          {"backend", backend_name(device.backend())},
                          {"device", device.info().name},
                          {"variant", plan.variant()},
                          {"brute_force", o->brute_force},
                          {"threads_per_block", plan.threads_per_block()},
                          {"output", o->out},
                          {"time_ms", ms}};
      if (options.kernel == PairwiseKernel::gaussian) j["h"] = o->h;
      if (options.kernel == PairwiseKernel::expression) j["expression"] = o->expr;
      add_stream_json(j, stats, b.startup_ms);
      std::cout << j.dump() << "\n";
      return;
    }
    std::cout << fmt::format("pairwise {} of X={} by Y={} on {} [{}{}], {:.4f} ms -> {}\n", what,
                             a.size(), b.source.size(), device.label(), plan.variant(),
                             o->brute_force ? ", brute force" : "", ms, o->out);
  });
}

}  // namespace parpat::cli
