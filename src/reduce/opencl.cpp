// OpenCL reduce variants (kernels in reduce.cl). One program per (dtype, op) and device holds
// every variant's kernels: the element and accumulator types and the operator's macros come in
// as -D options, block sizes from the tuning policies. Each kernel object builds its program and
// allocates its partials and counters once, in its constructor; run() only sets arguments and
// enqueues.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "parpat/array.hpp"
#include "reduce/opencl/program_options.hpp"
#include "reduce/reduce_internal.hpp"
#include "reduce/reduce_ops.hpp"
#include "runtime/opencl/opencl_device.hpp"

extern const char* const parpat_cl_reduce_ops;
extern const char* const parpat_cl_reduce;

namespace parpat::detail {

namespace {

using namespace opencl_reduce;

std::size_t pow2_ceil(std::int64_t x) {
  std::size_t p = 1;
  while (static_cast<std::int64_t>(p) < x)
    p *= 2;
  return p;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// What every variant shares: the device, the shape, the program's options and the argument
// conventions (pad = row_stride − cols locates flat index i at i + (i / cols) · pad).
class OpenclReduce : public ReduceKernel {
 protected:
  OpenclReduce(const Device& d, const ReduceShape& s)
      : device_(d),
        cl_(backend_cast<OpenclDevice>(d)),
        s_(s),
        options_(build_options(s, d.info())),
        tune_(tunables(d.info())),
        n_(static_cast<cl_long>(s.size())),
        cols_(static_cast<cl_long>(s.cols)),
        pad_(static_cast<cl_long>(s.rows > 1 ? s.row_stride - s.cols : 0)) {}

  cl::Kernel kernel(const char* name) {
    static const std::string source = std::string(parpat_cl_reduce_ops) + parpat_cl_reduce;
    return cl_.kernel("reduce.cl", source, options_, name);
  }
  // Kernels always take an indices argument; non-arg ops never write it.
  static cl_mem indices_or(const Buffer& indices, const Buffer& values) {
    return as_mem(indices.empty() ? values.handle() : indices.handle());
  }
  Buffer partials(std::int64_t count) const {
    return Buffer(device_,
                  static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * kMaxAccBytes);
  }

  Device device_;
  OpenclDevice& cl_;
  ReduceShape s_;
  std::string options_;
  Tunables tune_;
  cl_long n_, cols_, pad_;
};

// ---- tree and serial: passes until one group / work-item is left --------------------------------

class PassesKernel final : public OpenclReduce {
 public:
  // `per_group` elements fold into one partial per pass: the block for tree, the items for serial.
  PassesKernel(const Device& d, const ReduceShape& s, bool tree)
      : OpenclReduce(d, s),
        tree_(tree),
        block_(tree ? tune_.tree_block : tune_.serial_block),
        fold_(tree ? tune_.tree_block : tune_.serial_items),
        first_(kernel(tree ? "tree_first" : "serial_first")),
        next_(kernel(tree ? "tree_next" : "serial_next")) {
    std::int64_t f = static_cast<std::int64_t>(fold_);
    ping_ = partials(ceil_div(s.size(), f));
    pong_ = partials(ceil_div(ceil_div(s.size(), f), f));
  }

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    cl_mem idx = indices_or(indices, values), out = as_mem(values.handle());
    std::int64_t count = ceil_div(n_, static_cast<std::int64_t>(fold_));
    set_args(first_, as_mem(in.handle()), n_, cols_, pad_, as_mem(ping_.handle()), out, idx);
    cl_.launch(first_, global_for(count), block_);
    const Buffer* src = &ping_;
    const Buffer* dst = &pong_;
    while (count > 1) {
      std::int64_t next = ceil_div(count, static_cast<std::int64_t>(fold_));
      set_args(next_, as_mem(src->handle()), static_cast<cl_long>(count), as_mem(dst->handle()),
               out, idx);
      cl_.launch(next_, global_for(next), block_);
      std::swap(src, dst);
      count = next;
    }
  }

 private:
  // Work-items for `outputs` partials: one group each for tree, one work-item each for serial.
  std::size_t global_for(std::int64_t outputs) const {
    if (tree_) return static_cast<std::size_t>(outputs) * block_;
    return static_cast<std::size_t>(ceil_div(outputs, static_cast<std::int64_t>(block_))) * block_;
  }

  bool tree_;
  std::size_t block_, fold_;
  cl::Kernel first_;
  cl::Kernel next_;
  Buffer ping_, pong_;
};

// Groups of a grid-stride launch: the tuned grid, no more than the data fills.
std::size_t grid_groups(std::int64_t n, std::size_t block, std::size_t most) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(
      ceil_div(n, static_cast<std::int64_t>(block)), 1, static_cast<std::int64_t>(most)));
}

// ---- gridstride -------------------------------------------------------------------------------

class GridstrideKernel final : public OpenclReduce {
 public:
  GridstrideKernel(const Device& d, const ReduceShape& s)
      : OpenclReduce(d, s),
        groups_(grid_groups(s.size(), tune_.gridstride_block, tune_.gridstride_groups)),
        fold_(kernel("gridstride_partials")),
        finish_(kernel("gridstride_finish")),
        partials_(partials(static_cast<std::int64_t>(groups_))) {}

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    std::size_t block = tune_.gridstride_block;
    set_args(fold_, as_mem(in.handle()), n_, cols_, pad_, as_mem(partials_.handle()));
    cl_.launch(fold_, groups_ * block, block);
    set_args(finish_, as_mem(partials_.handle()), static_cast<cl_long>(groups_),
             as_mem(values.handle()), indices_or(indices, values));
    cl_.launch(finish_, block, block);
  }

 private:
  std::size_t groups_;
  cl::Kernel fold_;
  cl::Kernel finish_;
  Buffer partials_;
};

// ---- atomic -----------------------------------------------------------------------------------

class AtomicKernel final : public OpenclReduce {
 public:
  AtomicKernel(const Device& d, const ReduceShape& s)
      : OpenclReduce(d, s),
        groups_(grid_groups(s.size(), tune_.atomic_block, tune_.atomic_groups)),
        init_(kernel("atomic_reset")),
        fold_(kernel("atomic_fold")),
        finish_(kernel("atomic_result")),
        target_(d, 8) {}

  void run(const Buffer& in, const Buffer& values, const Buffer&) override {
    cl_mem target = as_mem(target_.handle());
    set_args(init_, target);
    cl_.launch(init_, 1, 1);
    set_args(fold_, as_mem(in.handle()), n_, cols_, pad_, target);
    cl_.launch(fold_, groups_ * tune_.atomic_block, tune_.atomic_block);
    set_args(finish_, target, as_mem(values.handle()));
    cl_.launch(finish_, 1, 1);
  }

 private:
  std::size_t groups_;
  cl::Kernel init_;
  cl::Kernel fold_;
  cl::Kernel finish_;
  Buffer target_;
};

// ---- fast -------------------------------------------------------------------------------------

class FastKernel final : public OpenclReduce {
 public:
  FastKernel(const Device& d, const ReduceShape& s) : OpenclReduce(d, s), block_(tune_.fast_block) {
    std::size_t block = tune_.fast_block;
    auto most = static_cast<std::int64_t>(tune_.fast_groups);
    auto vw = static_cast<std::int64_t>(kVectorBytes / dtype_size(s.dtype));
    std::int64_t counters = 1;
    if (s.axis == Axis::all) {
      // Small inputs are latency-bound: up to reduce.fast.single_block_bytes one group, no
      // ticket; then, while a batch of 8 vectors per work-item (group_elements per vector step)
      // would not fill the tuned grid, groups of about reduce.fast.small_items vectors per
      // work-item, so the data is spread over as many compute units as it covers and each
      // work-item waits for memory once; past that the tuned grid (arg ops have their own),
      // 8 vectors in flight each.
      kernel_ = kernel("fast_all");
      if (is_arg_op(s.op)) most = static_cast<std::int64_t>(tune_.fast_arg_groups);
      auto group_elements = static_cast<std::int64_t>(block) * vw;
      std::int64_t large = ceil_div(s.size(), group_elements * 8);
      std::int64_t bytes = s.size() * static_cast<std::int64_t>(dtype_size(s.dtype));
      std::int64_t groups = bytes <= tune_.fast_single_block_bytes ? 1
                            : large >= most
                                ? most
                                : ceil_div(s.size(), group_elements * tune_.fast_small_items);
      groups_ = static_cast<std::size_t>(std::clamp<std::int64_t>(groups, 1, most));
      partials_ = partials(static_cast<std::int64_t>(groups_));
    } else if (s.axis == Axis::rows) {
      // Groups of their own size (smaller than axis all's, so a group combining its rows stalls
      // less of a compute unit). Slices wide enough that each work-item loads about 16 vectors
      // of its row (so the slice's combine is paid once per 16 loads), wider while the rows
      // alone cannot fill rows_blocks_per_cu groups per compute unit. Then a slice per row, up
      // to rows_grid_per_cu groups per compute unit; beyond that the groups stride over the
      // rows.
      block_ = tune_.fast_rows_block;
      most = static_cast<std::int64_t>(tune_.fast_rows_groups);
      slice_ = std::min(block_, pow2_ceil(ceil_div(s.cols, vw * 16)));
      while (slice_ < block_ && ceil_div(s.rows, static_cast<std::int64_t>(block_ / slice_)) < most)
        slice_ *= 2;
      std::int64_t rows_per_group = static_cast<std::int64_t>(block_ / slice_);
      groups_ = static_cast<std::size_t>(std::clamp<std::int64_t>(
          ceil_div(s.rows, rows_per_group), 1, static_cast<std::int64_t>(tune_.fast_rows_grid)));
      kernel_ = kernel("fast_rows");
    } else if (strips_fit(s)) {
      strips_ = true;
      block_ = tune_.fast_cols_block;
      // 16-byte strips of columns; chunks of rows until tiles × chunks fills the device, each
      // chunk at least 16 rows.
      std::int64_t strips = ceil_div(s.cols, vw);
      std::int64_t tiles = ceil_div(strips, static_cast<std::int64_t>(block_));
      auto fill = static_cast<std::int64_t>(tune_.fast_cols_groups);
      chunks_ = std::clamp<std::int64_t>(fill / tiles, 1, ceil_div(s.rows, 16));
      rows_per_chunk_ = ceil_div(s.rows, chunks_);
      chunks_ = ceil_div(s.rows, rows_per_chunk_);
      groups_ = static_cast<std::size_t>(tiles * chunks_);
      counters = tiles;
      kernel_ = kernel("fast_cols_strips");
      partials_ = partials(chunks_ > 1 ? chunks_ * s.cols : 1);
    } else {
      tile_ = std::min(block, pow2_ceil(s.cols));
      std::int64_t height = static_cast<std::int64_t>(block / tile_);
      std::int64_t tiles = ceil_div(s.cols, static_cast<std::int64_t>(tile_));
      // Split the rows into chunks while the grid is smaller than the tuned one, keeping at
      // least four rows per work-item in each chunk.
      chunks_ = std::clamp<std::int64_t>(most / tiles, 1,
                                         std::max<std::int64_t>(1, s.rows / (height * 4)));
      rows_per_chunk_ = ceil_div(s.rows, chunks_);
      chunks_ = ceil_div(s.rows, rows_per_chunk_);
      groups_ = static_cast<std::size_t>(tiles * chunks_);
      counters = tiles;
      kernel_ = kernel("fast_cols");
      partials_ = partials(chunks_ > 1 ? chunks_ * s.cols : 1);
    }
    counters_ = Buffer(d, static_cast<std::size_t>(counters) * sizeof(cl_uint));
    std::vector<cl_uint> zeros(static_cast<std::size_t>(counters), 0);
    counters_.upload(zeros.data(), counters_.bytes());
  }

  void run(const Buffer& in, const Buffer& values, const Buffer& indices) override {
    cl_mem x = as_mem(in.handle()), out = as_mem(values.handle()),
           idx = indices_or(indices, values);
    auto rows = static_cast<cl_long>(s_.rows), stride = static_cast<cl_long>(s_.row_stride);
    if (s_.axis == Axis::all) {
      set_args(kernel_, x, n_, cols_, pad_, as_mem(partials_.handle()), as_mem(counters_.handle()),
               out, idx);
    } else if (s_.axis == Axis::rows) {
      set_args(kernel_, x, rows, cols_, stride, static_cast<cl_uint>(slice_), out, idx);
    } else if (strips_) {
      set_args(kernel_, x, rows, cols_, stride, static_cast<cl_long>(chunks_),
               static_cast<cl_long>(rows_per_chunk_), as_mem(partials_.handle()),
               as_mem(counters_.handle()), out, idx);
    } else {
      set_args(kernel_, x, rows, cols_, stride, static_cast<cl_uint>(tile_),
               static_cast<cl_long>(chunks_), static_cast<cl_long>(rows_per_chunk_),
               as_mem(partials_.handle()), as_mem(counters_.handle()), out, idx);
    }
    cl_.launch(kernel_, groups_ * block_, block_);
  }

 private:
  // Axis cols takes 16-byte strips when every row starts 16-byte aligned (buffers are) and the
  // strips fill at least half a group.
  bool strips_fit(const ReduceShape& s) const {
    auto vw = static_cast<std::int64_t>(kVectorBytes / dtype_size(s.dtype));
    return s.row_stride % vw == 0 &&
           ceil_div(s.cols, vw) * 2 >= static_cast<std::int64_t>(tune_.fast_cols_block);
  }

  cl::Kernel kernel_;
  bool strips_ = false;
  std::size_t block_, groups_ = 1, slice_ = 1, tile_ = 1;
  std::int64_t chunks_ = 1, rows_per_chunk_ = 1;
  Buffer partials_, counters_;
};

// float64 input and the moment ops (float64 accumulators) need cl_khr_fp64.
bool dtype_fits(const ReduceShape& s, const DeviceInfo& d) {
  return (s.dtype != DType::float64 && !statistic_of(s.op)) || d.fp64;
}

bool supports_axis_all(const ReduceShape& s, const DeviceInfo& d) {
  return s.axis == Axis::all && is_basic_reduce_op(s.op) && dtype_fits(s, d);
}

bool supports_atomic(const ReduceShape& s, const DeviceInfo& d) {
  return supports_axis_all(s, d) && atomic_fits(s.dtype, s.op, d);
}

VariantInfo info(const char* name, const char* idea, std::string params, const char* limits,
                 bool deterministic) {
  return variant_info("reduce", Backend::opencl, name, idea, std::move(params), limits,
                      deterministic);
}

template <class Policy>
std::string params_of(std::initializer_list<const char*> names) {
  return backend_params<Policy>(Backend::opencl, names);
}

}  // namespace

std::vector<ReduceVariant> opencl_reduce_variants() {
  return {
      {info("tree",
            "one element per work-item, halving tree in local memory, passes over two "
            "ping-pong buffers",
            params_of<ReduceTreePolicy>({"block"}),
            "axis all; the six basic ops; float64 needs cl_khr_fp64", true),
       supports_axis_all,
       [](const Device& d, const ReduceShape& s) -> std::unique_ptr<ReduceKernel> {
         return std::make_unique<PassesKernel>(d, s, true);
       }},
      {info("serial",
            "each work-item folds its own block of items serially, no local memory, "
            "passes over two ping-pong buffers",
            params_of<ReduceSerialPolicy>({"block", "items"}),
            "axis all; the six basic ops; float64 needs cl_khr_fp64", true),
       supports_axis_all,
       [](const Device& d, const ReduceShape& s) -> std::unique_ptr<ReduceKernel> {
         return std::make_unique<PassesKernel>(d, s, false);
       }},
      {info("gridstride",
            "grid-stride loop in registers, local-memory tree, per-group partials, "
            "second launch of one group",
            params_of<ReduceGridStridePolicy>({"block", "blocks_per_cu"}),
            "axis all; the six basic ops; float64 needs cl_khr_fp64", true),
       supports_axis_all,
       [](const Device& d, const ReduceShape& s) -> std::unique_ptr<ReduceKernel> {
         return std::make_unique<GridstrideKernel>(d, s);
       }},
      {info("atomic",
            "grid-stride loop, local-memory tree, group results merged into one "
            "accumulator by compare-and-swap",
            params_of<ReduceAtomicPolicy>({"block", "blocks_per_cu"}),
            "axis all; ops sum prod min max (no argmin/argmax, no uint8 min/max); 64-bit "
            "accumulators (integer and float sum/prod, 64-bit min/max) need "
            "cl_khr_int64_base_atomics; float sum/prod order depends on timing",
            false),
       supports_atomic,
       [](const Device& d, const ReduceShape& s) -> std::unique_ptr<ReduceKernel> {
         return std::make_unique<AtomicKernel>(d, s);
       }},
      {info("fast",
            "16-byte vector loads, 8 in flight, fixed grid, last group combines the "
            "partials in order (one launch); rows: a slice per row; cols: 16-byte column "
            "strips, row chunks",
            params_of<ReduceFastPolicy>({"block", "blocks_per_cu"}),
            "float64 input and mean/var/std need cl_khr_fp64", true),
       [](const ReduceShape& s, const DeviceInfo& d) { return dtype_fits(s, d); },
       [](const Device& d, const ReduceShape& s) -> std::unique_ptr<ReduceKernel> {
         return std::make_unique<FastKernel>(d, s);
       }},
  };
}

}  // namespace parpat::detail
