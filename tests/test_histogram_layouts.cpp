// Histogram `fast` and the CPU's `parallel` under their tuning values, on every device: the
// CUDA raw-pointer layer, CUDA and OpenCL layouts forced by PARPAT_TUNING (passes, packed
// counters with their carries, columns, global counting, rows sorted into buckets), the OpenCL
// path without 64-bit atomics, the layout OpenCL `fast` gives each problem on an NVIDIA-like
// GPU, and the CPU's small sections. Every count against the CPU reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "histogram/histogram_internal.hpp"
#include "histogram_support.hpp"
#include "parpat/array.hpp"
#include "parpat/histogram.hpp"
#include "runtime/tuning.hpp"
#include "test_support.hpp"

#ifdef PARPAT_HAVE_CUDA
#include "parpat/cuda/histogram.cuh"
#endif
#ifdef PARPAT_HAVE_OPENCL
#include "histogram/opencl_layout.hpp"
#include "histogram/tuning.hpp"
#include "runtime/opencl/opencl_device.hpp"
extern const char* const parpat_cl_histogram_rules;
extern const char* const parpat_cl_histogram;
extern const char* const parpat_cl_histogram_sink;
#endif

namespace parpat::test {
namespace {

#ifdef PARPAT_HAVE_CUDA
// The raw-pointer CUDA layer: device pointers, a stream and caller-owned workspace.
TEST(HistogramCudaRaw, MatchesTheReference) {
  const std::vector<Device> gpus = cuda_devices();
  if (gpus.empty()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(run_seed() + 10);
  for (DType t : kDTypes)
    for (std::int64_t bins : {7, 256, 65536, 1 << 20}) {
      const std::int64_t n = (1 << 20) + 13;
      const auto range = range_for(t);
      const double lo = range.first, hi = range.second;
      std::uniform_real_distribution<double> u(lo - 10, hi + 10);
      auto host = make_values(t, n, [&] { return fit(t, u(rng)); });
      HistogramBins b = HistogramBins::even(bins, lo, hi);
      auto p = problem_of(t, n, b);
      std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
      detail::histogram_reference(host.data(), p, expected.data());
      Array in = Array::from_host(gpus[0], t, {n}, host.data());
      Buffer counts(gpus[0], expected.size() * 8);
      Buffer workspace(gpus[0], std::max<std::size_t>(cuda::histogram_workspace_bytes(t, bins), 1));
      cuda::histogram_even(in.buffer().handle(), t, n, bins, lo, hi,
                           static_cast<unsigned long long*>(counts.handle()), workspace.handle(),
                           workspace.bytes(), nullptr);
      gpus[0].synchronize();
      cudaDeviceSynchronize();
      std::vector<std::uint64_t> got(expected.size());
      counts.download(got.data(), got.size() * 8);
      EXPECT_EQ(got, expected) << dtype_name(t) << " " << bins << " bins, seed " << run_seed();
    }
}
#endif

// Runs `variant` on one device under one PARPAT_TUNING setting and checks the counts on skewed
// and spread data.
void check_under_tuning(const TunedDevice& target, const char* variant) {
  std::mt19937_64 rng(run_seed() + 11 + target.index);
  ScopedTuning tuning(target.setting);
  for (DType t : {DType::int8, DType::uint8, DType::uint16, DType::int64, DType::float32})
    for (std::int64_t bins : {7, 1000, 20000}) {
      const auto range = range_for(t);
      const double lo = range.first, hi = range.second;
      const std::int64_t n = 100003;
      std::uniform_real_distribution<double> u(lo - 10, hi + 10);
      std::bernoulli_distribution hot(0.8);
      auto host = make_values(t, n, [&] { return fit(t, hot(rng) ? (lo + hi) / 2 : u(rng)); });
      auto p = problem_of(t, n, HistogramBins::even(bins, lo, hi));
      std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
      detail::histogram_reference(host.data(), p, expected.data());
      Array in = Array::from_host(target.device, t, {n}, host.data());
      HistogramResult r = histogram(in, HistogramBins::even(bins, lo, hi), {variant});
      expected.resize(static_cast<std::size_t>(bins));
      EXPECT_EQ(r.counts, expected)
          << target.setting << ": " << dtype_name(t) << " " << bins << " bins, seed " << run_seed();
    }
}

// The CPU's private counters are 32-bit: a section never holds 2^31 values, so inputs beyond
// threads × 2^31 values take more sections than threads. A tiny section bound exercises that
// split (and the merge of many private histograms) on small inputs.
class HistogramCpuParallelSections : public ::testing::TestWithParam<TunedDevice> {};
TEST_P(HistogramCpuParallelSections, ManySmallSectionsMatchTheReference) {
  check_under_tuning(GetParam(), "parallel");
}
INSTANTIATE_TEST_SUITE_P(
    Tunings, HistogramCpuParallelSections,
    ::testing::ValuesIn(
        tuned_devices([](const Device& d) { return d.backend() == Backend::cpu; },
                      {"histogram.parallel.section_values=1000",
                       "histogram.parallel.section_values=4096,histogram.parallel.private_mib=1"})),
    tuned_device_name);

// The CPU's `parallel` reads views of one step in place, a block of values at a time
// (StridedInputs checks their counts); `serial`, the reference, reads dense input only.
TEST(HistogramCpuParallel, ReadsSteps) {
  const auto problem = problem_of(DType::float32, 1 << 20, HistogramBins::even(1024, 0, 1));
  for (const auto& d : devices()) {
    if (d.backend() != Backend::cpu) continue;
    EXPECT_TRUE(
        detail::find_histogram_variant(Backend::cpu, "parallel").make(d, problem)->reads_steps());
    EXPECT_FALSE(
        detail::find_histogram_variant(Backend::cpu, "serial").make(d, problem)->reads_steps());
  }
}

// `fast` on one GPU under one tuning setting; OpenCL and CUDA each instantiate it with their own
// settings below.
class HistogramFastTunings : public ::testing::TestWithParam<TunedDevice> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HistogramFastTunings);  // no GPU here
TEST_P(HistogramFastTunings, MatchTheReference) {
  check_under_tuning(GetParam(), "fast");
}

#ifdef PARPAT_HAVE_OPENCL
// Devices without cl_khr_int64_base_atomics count into two 32-bit words with a carry: build
// that path on every OpenCL device and check that counts cross 2^32 correctly.
TEST(HistogramOpenclWithout64BitAtomics, CarriesIntoTheHighWord) {
  for (const auto& d : devices()) {
    if (d.backend() != Backend::opencl) continue;
    auto& cl = detail::backend_cast<detail::OpenclDevice>(d);
    const std::int64_t n = 100003;
    std::vector<std::uint8_t> values(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      values[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i % 3 == 0 ? 7 : i % 256);
    HistogramBins b = HistogramBins::even(256, -0.5, 255.5);
    auto p = problem_of(DType::uint8, n, b);
    std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
    detail::histogram_reference(values.data(), p, expected.data());
    // Every counter starts just below 2^32 so most of them carry.
    const std::uint64_t start = (std::uint64_t{1} << 32) - 1000;
    std::vector<std::uint64_t> initial(expected.size(), start);
    for (auto& e : expected)
      e += start;
    // The fast kernel's uint8 path counts per value and merges values into slots through
    // table[256 + table[v]]: the identity merge (cell v for value v) is one valid table.
    // Its other paths count rows (0 below the range, 1 + b for bin b, then above and NaN) from
    // a table of rows; the classic kernels read slots.
    auto table = detail::slot_table(p);
    std::vector<std::uint32_t> merge(512), rows(table.size());
    for (std::uint32_t v = 0; v < 256; ++v) {
      merge[v] = v;
      merge[256 + v] = table[v];
    }
    for (std::size_t v = 0; v < table.size(); ++v)
      rows[v] = static_cast<std::uint32_t>(detail::row_of_slot(table[v], p.bins));
    Buffer in(d, values.size()), table_buf(d, table.size() * 4), rows_buf(d, rows.size() * 4),
        merge_buf(d, merge.size() * 4), counts(d, initial.size() * 8);
    in.upload(values.data(), values.size());
    table_buf.upload(table.data(), table_buf.bytes());
    rows_buf.upload(rows.data(), rows_buf.bytes());
    merge_buf.upload(merge.data(), merge_buf.bytes());
    struct Case {
      const char* kernel;
      const char* options;  // besides the dtype, the rule and INT64_ATOMICS=0
      bool count_values;
      std::size_t columns;      // fast_local: the COLUMNS it is built with (0: packed)
      std::size_t field_bits;   // packed: FIELD_BITS
      std::size_t hot_entries;  // packed: HOT_ENTRIES
    };
    // fast_local runs one pass over every slot (WHOLE), in striped or packed counters (the
    // narrow fields wrap often on the hot value 7: through the hot-row table, or without one
    // straight to the global counts).
    for (Case c :
         {Case{"interleaved", "", false, 1, 0, 0}, Case{"aggregated", "", false, 1, 0, 0},
          Case{"fast_local", "-DWHOLE=1 -DCOLUMNS=2 -DRUNS=0", false, 2, 0, 0},
          Case{"fast_local", "-DWHOLE=1 -DCOLUMNS=4 -DRUNS=1 -DCOUNT_VALUES=1", true, 4, 0, 0},
          Case{"fast_local", "-DWHOLE=1 -DCOLUMNS=32 -DRUNS=0 -DCOUNT_VALUES=1", true, 32, 0, 0},
          Case{"fast_local", "-DWHOLE=1 -DFIELD_BITS=16 -DRUNS=1", false, 0, 16, 0},
          Case{"fast_local", "-DWHOLE=1 -DFIELD_BITS=5 -DHOT_ENTRIES=16 -DRUNS=0", false, 0, 5, 16},
          Case{"fast_local", "-DWHOLE=1 -DFIELD_BITS=4 -DRUNS=0", false, 0, 4, 0},
          Case{"fast_global", "-DRUNS=1", false, 1, 0, 0}}) {
      counts.upload(initial.data(), counts.bytes());
      cl::Kernel k = cl.kernel(
          "histogram.cl",
          std::string(parpat_cl_histogram_rules) + parpat_cl_histogram_sink + parpat_cl_histogram,
          std::string("-DT=uchar -DVEC=16 -DRULE=0 -DINT64_ATOMICS=0 ") + c.options, c.kernel);
      cl_uint i = 0;
      auto set_arg = [&k](cl_uint index, const auto& value) {
        if constexpr (std::is_pointer_v<std::decay_t<decltype(value)>>) {
          k.setArg(index, sizeof(value), &value);
        } else {
          k.setArg(index, value);
        }
      };
      set_arg(i++, detail::as_mem(in.handle()));
      set_arg(i++, static_cast<cl_long>(n));
      std::string kernel = c.kernel;
      const bool fast = kernel.rfind("fast", 0) == 0;
      if (fast) set_arg(i++, cl_long{1});  // the step between values: dense
      set_arg(i++, detail::as_mem(c.count_values ? merge_buf.handle()
                                  : fast         ? rows_buf.handle()
                                                 : table_buf.handle()));
      if (kernel == "aggregated") {
        set_arg(i++, static_cast<cl_uint>(p.slots()));
        set_arg(i++, cl::Local(static_cast<std::size_t>(p.slots()) * 4));
      } else if (kernel == "fast_local") {
        const std::size_t range = c.count_values ? 256 : static_cast<std::size_t>(p.slots());
        set_arg(i++, cl_uint{1});
        set_arg(i++, static_cast<cl_uint>(range));
        set_arg(i++, static_cast<cl_uint>(range));
        const std::size_t fields = c.field_bits ? 32 / c.field_bits : 1;
        // Striped: whole groups of rows (striped_words), then the merge cells of 1-byte input;
        // packed: the words, then the hot-row table's entries of 3 words.
        const std::size_t words = c.columns
                                      ? detail::striped_words(range, std::uint32_t(c.columns)) +
                                            (c.count_values ? 256 : 0)
                                      : (range + fields - 1) / fields + c.hot_entries * 3;
        set_arg(i++, cl::Local(words * 4));
      } else if (kernel == "fast_global") {
        set_arg(i++, static_cast<cl_uint>(p.slots()));
      }
      set_arg(i++, detail::as_mem(counts.handle()));
      cl.launch(k, 64 * 8, 64);
      std::vector<std::uint64_t> got(expected.size());
      counts.download(got.data(), got.size() * 8);
      EXPECT_EQ(got, expected) << c.kernel << " " << c.options;
    }
  }
}

// OpenCL `fast` picks its layout from tuning values: force each one (many slot ranges side by
// side in packed or 32-bit counters, no register runs or runs at every column count, a single
// column, global counting, no per-value uint8 path, float32 settled against float thresholds
// instead of the float64 edges, fewer vectors in flight for 4-byte input in striped rows and in
// narrow fields, and the rest).
INSTANTIATE_TEST_SUITE_P(
    OpenclLayouts, HistogramFastTunings,
    ::testing::ValuesIn(tuned_devices(
        [](const Device& d) { return d.backend() == Backend::opencl; },
        {"histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=1",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=0",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=1,"
         "histogram.fast.runs_below_columns=2",
         "histogram.fast.striped_kib=8,histogram.fast.max_passes=40,histogram.opencl.packed=1,"
         "histogram.opencl.field_bits=16",
         "histogram.fast.striped_kib=4,histogram.opencl.packed=1,histogram.opencl.hot_entries=0,"
         "histogram.opencl.narrow_vectors_32bit=3",
         "histogram.fast.runs_below_columns=0,histogram.fast.vectors=3,histogram.fast.block=96,"
         "histogram.fast.vectors_32bit=3",
         "histogram.fast.max_columns=1,histogram.fast.runs_below_columns=0",
         "histogram.fast.striped_kib=1,histogram.fast.max_passes=0",
         "histogram.fast.runs_below_columns=64,histogram.fast.vectors=4,"
         "histogram.fast.vectors_32bit=2",
         "histogram.opencl.float_edges=0,histogram.fast.striped_kib=8,histogram.fast.max_passes=0",
         "histogram.opencl.float_edges=0"})),
    tuned_device_name);

// The layout OpenCL `fast` gives each kind of problem on an NVIDIA-like GPU (48 KiB of local
// memory a group, groups side by side) under the default tuning: a slip in it changes no count,
// only the speed, so no other test sees it.
TEST(HistogramOpenclFast, LayoutOfEachProblemOnAGpu) {
  DeviceInfo gpu;
  gpu.backend = Backend::opencl;
  gpu.vendor = "NVIDIA Corporation";
  gpu.local_memory = 48 << 10;
  gpu.compute_units = 132;
  gpu.max_group_size = 1024;
  gpu.independent_groups = true;
  DeviceInfo other_gpu = gpu;
  other_gpu.vendor = "another vendor";
  auto layout_on = [](const DeviceInfo& d, DType t, std::int64_t bins, double lo, double hi) {
    const detail::HistogramProblem p = problem_of(t, 1 << 20, HistogramBins::even(bins, lo, hi));
    return detail::fast_layout(p, d, detail::tuned<detail::HistogramFastPolicy>(d),
                               detail::tuned<detail::HistogramOpenclPolicy>(d),
                               static_cast<std::uint32_t>(p.slots()));
  };
  auto layout = [&](DType t, std::int64_t bins) { return layout_on(gpu, t, bins, 0, 1000); };
  const auto bytes = layout(DType::uint8, 1 << 20);  // 256 values, whatever the bins
  EXPECT_TRUE(bytes.count_values);
  EXPECT_EQ(bytes.counted, 256u);
  EXPECT_EQ(bytes.columns, 32u);
  EXPECT_FALSE(bytes.global);
  const auto striped = layout(DType::float32, 1024);  // 1027 rows in 8 lane-striped columns
  EXPECT_EQ(striped.passes, 1u);
  EXPECT_EQ(striped.field_bits, 0u);
  EXPECT_EQ(striped.columns, 8u);
  for (DType t : {DType::float32, DType::int32, DType::float64}) {
    const auto rows = layout(t, 65536);  // one range of 5-bit fields
    EXPECT_FALSE(rows.count_values) << dtype_name(t);
    EXPECT_FALSE(rows.global) << dtype_name(t);
    EXPECT_EQ(rows.passes, 1u) << dtype_name(t);
    EXPECT_EQ(rows.field_bits, 5u) << dtype_name(t);
  }
  {  // 4-byte input: 6 vectors in flight in 5-bit fields, 4 in striped rows (NVIDIA)
    const auto fast_policy = detail::tuned<detail::HistogramFastPolicy>(gpu);
    const auto opencl_policy = detail::tuned<detail::HistogramOpenclPolicy>(gpu);
    EXPECT_EQ(detail::vectors_in_flight(layout(DType::int32, 65536), DType::int32, fast_policy,
                                        opencl_policy),
              6);
    EXPECT_EQ(detail::vectors_in_flight(layout(DType::int32, 1024), DType::int32, fast_policy,
                                        opencl_policy),
              4);
    EXPECT_EQ(detail::vectors_in_flight(layout(DType::float64, 65536), DType::float64, fast_policy,
                                        opencl_policy),
              8);
  }
  // Groups a compute unit: packed fields take about a quarter of a field a row in each group
  // (5-bit: 8 values a row), the nearest power of two from the resident grid (2) to 8.
  auto groups = [&](std::int64_t n, std::int64_t bins) {
    return detail::local_groups_per_cu(layout(DType::float32, bins), n, gpu,
                                       detail::tuned<detail::HistogramFastPolicy>(gpu),
                                       detail::tuned<detail::HistogramOpenclPolicy>(gpu));
  };
  EXPECT_EQ(groups(std::int64_t{1} << 27, 65536), 2);  // 1.9
  EXPECT_EQ(groups(std::int64_t{1} << 28, 65536), 4);  // 3.9
  EXPECT_EQ(groups(std::int64_t{1} << 29, 65536), 8);  // 7.8
  EXPECT_EQ(groups(std::int64_t{1} << 34, 65536), 8);
  EXPECT_EQ(groups(1000, 65536), 2);
  EXPECT_EQ(groups(std::int64_t{1} << 28, 1024), 8);  // striped rows: histogram.fast.groups_per_cu
  EXPECT_EQ(layout(DType::float32, 16384).field_bits, 16u);
  EXPECT_EQ(groups(std::int64_t{1} << 28, 16384), 8);  // and wider fields
  for (DType t : {DType::int16, DType::uint16}) {
    // Per value, the window of [0, 1000]: 1001 values and 96 rows outside, in 32-bit counters.
    const auto window = layout(t, 65536);
    EXPECT_TRUE(window.values16) << dtype_name(t);
    EXPECT_EQ(window.counted, 1001u + 96) << dtype_name(t);
    EXPECT_EQ(window.passes, 1u) << dtype_name(t);
    EXPECT_EQ(window.field_bits, 0u) << dtype_name(t);
    // A window in packed fields, whose rows outside it would wrap: by bits instead (on
    // NVIDIA one range of 5-bit fields, elsewhere two of 8-bit ones).
    const auto wide = layout_on(gpu, t, 65536, 0, 40000);
    EXPECT_TRUE(wide.window.by_bits) << dtype_name(t);
    EXPECT_EQ(wide.counted, 65536u) << dtype_name(t);
    EXPECT_EQ(wide.passes, 1u) << dtype_name(t);
    EXPECT_EQ(wide.field_bits, 5u) << dtype_name(t);
    EXPECT_EQ(layout_on(other_gpu, t, 65536, 0, 40000).field_bits, 8u) << dtype_name(t);
    // Every value in a bin: a row per value's bits.
    const double lo = t == DType::int16 ? -32768 : 0;
    const auto values = layout_on(gpu, t, 65536, lo, lo + 65535);
    EXPECT_TRUE(values.window.by_bits) << dtype_name(t);
    EXPECT_EQ(values.counted, 65536u) << dtype_name(t);
    EXPECT_EQ(values.passes, 1u) << dtype_name(t);
    EXPECT_EQ(values.field_bits, 5u) << dtype_name(t);
    const auto elsewhere = layout_on(other_gpu, t, 65536, lo, lo + 65535);
    EXPECT_EQ(elsewhere.passes, 2u) << dtype_name(t);
    EXPECT_EQ(elsewhere.field_bits, 8u) << dtype_name(t);
    // 5-bit fields: 4 vectors in flight and groups by the fill rule (8 for 2^29 values, 4 for
    // 2^28); 8-bit ones: 8 vectors, histogram.opencl.per_value16_groups_per_cu (opencl.cpp).
    const auto fast_policy = detail::tuned<detail::HistogramFastPolicy>(gpu);
    const auto opencl_policy = detail::tuned<detail::HistogramOpenclPolicy>(gpu);
    EXPECT_EQ(detail::vectors_in_flight(values, t, fast_policy, opencl_policy), 4);
    EXPECT_EQ(
        detail::local_groups_per_cu(values, std::int64_t{1} << 29, gpu, fast_policy, opencl_policy),
        8);
    EXPECT_EQ(
        detail::local_groups_per_cu(values, std::int64_t{1} << 28, gpu, fast_policy, opencl_policy),
        4);
    EXPECT_EQ(detail::vectors_in_flight(elsewhere, t,
                                        detail::tuned<detail::HistogramFastPolicy>(other_gpu),
                                        detail::tuned<detail::HistogramOpenclPolicy>(other_gpu)),
              8);
  }
  EXPECT_TRUE(layout(DType::float32, 1 << 20).global);  // past max_passes ranges
  // bfloat16 in permuted striped rows below 8 columns (4099 rows in 2 columns of whole groups of
  // 16 rows), other input in order, and every input but 1-byte permuted below 32 columns under
  // permuted_rows=2.
  const auto crowded = layout_on(gpu, DType::bfloat16, 4096, 0, 1);
  EXPECT_TRUE(crowded.permuted_rows);
  EXPECT_EQ(crowded.columns, 2u);
  EXPECT_EQ(crowded.local_bytes, 4112u * 2 * 4);
  // From 8 columns (4 lanes a column) bfloat16's rows stay in order too; in 8 they are padded to
  // 9 words a row where its crowded rows lie 4 or more apart (over [0, 1] in 1024 bins; 2 over
  // [-1, 1]).
  const auto eight = layout_on(gpu, DType::bfloat16, 1024, 0, 1);
  EXPECT_EQ(eight.columns, 8u);
  EXPECT_FALSE(eight.permuted_rows);
  EXPECT_TRUE(eight.padded_rows);
  EXPECT_EQ(eight.local_bytes, 1027u * 9 * 4);
  const auto both_signs = layout_on(gpu, DType::bfloat16, 1024, -1, 1);
  EXPECT_EQ(both_signs.columns, 8u);
  EXPECT_FALSE(both_signs.padded_rows);
  EXPECT_FALSE(layout(DType::float16, 1024).padded_rows);
  EXPECT_FALSE(crowded.padded_rows);
  EXPECT_FALSE(layout(DType::float16, 4096).permuted_rows);
  EXPECT_FALSE(layout(DType::float32, 4096).permuted_rows);
  EXPECT_FALSE(layout(DType::int16, 4096).permuted_rows);
  {
    ScopedTuning every("histogram.fast.permuted_rows=2");
    EXPECT_TRUE(layout(DType::float32, 4096).permuted_rows);
    EXPECT_FALSE(layout(DType::uint8, 4096).permuted_rows);  // values, not rows
  }
  // float16 and bfloat16 in rows below 65536 bins, in 16-bit fields, never narrower ones.
  EXPECT_EQ(layout(DType::float16, 16384).field_bits, 16u);
  EXPECT_FALSE(layout(DType::float16, 16384).values16);
  // From 65536 bins per value in 16-bit fields (on NVIDIA's OpenCL): [0, 1] in one range (the
  // values from -0 to 1), [-1, 1] in two.
  for (DType t : {DType::float16, DType::bfloat16}) {
    const auto unit = layout_on(gpu, t, 65536, 0, 1);
    EXPECT_TRUE(unit.values16) << dtype_name(t);
    EXPECT_EQ(unit.counted, (t == DType::float16 ? 0x3C00u : 0x3F80u) + 2 + 96) << dtype_name(t);
    EXPECT_EQ(unit.passes, 1u) << dtype_name(t);
    EXPECT_EQ(unit.field_bits, 16u) << dtype_name(t);
    const auto symmetric = layout_on(gpu, t, 65536, -1, 1);
    EXPECT_EQ(symmetric.passes, 2u) << dtype_name(t);
    EXPECT_EQ(symmetric.field_bits, 16u) << dtype_name(t);
    // Elsewhere in rows, globally.
    EXPECT_TRUE(layout_on(other_gpu, t, 65536, 0, 1).global) << dtype_name(t);
    EXPECT_EQ(layout_on(other_gpu, t, 65536, 0, 1).field_bits, 0u) << dtype_name(t);
  }
}

// Where 16-bit input counted per value keeps its rows: the window from the first value in a bin
// to the last, in key order, and past it each work-item's rows for the values above the range,
// NaN and below it (or, where the window would be every value, a row per value's bits); each
// value's row holds its reference slot, for every bit pattern and lane, whatever the range.
TEST(HistogramOpenclFast, ValueWindowsHoldEachValueOnce) {
  struct Case {
    DType dtype;
    double lo, hi;
    std::uint32_t rows;  // the window's values; 65536: by bits
  };
  const Case cases[] = {
      {DType::float16, 0, 1, 0x3C00 + 2},       // -0 and 0 to 1
      {DType::float16, -1, 1, 2 * 0x3C00 + 2},  // -1 to 1
      {DType::float16, -3, -1, 0x4200 - 0x3C00 + 1},
      {DType::float16, -65504, 65504, 2 * 0x7BFF + 2},  // every finite value
      {DType::float16, 1.0001, 1.0002, 0},              // between two float16 values
      {DType::float16, 1e5, 2e5, 0},                    // beyond the largest finite value
      {DType::bfloat16, 0, 1, 0x3F80 + 2},
      {DType::bfloat16, -1e-38, 1e-38, 2 * 109},  // ±(0 to 108) subnormal steps of 2^-133
      {DType::int16, -5, 5, 11},
      {DType::int16, -32768, 32767, 65536},
      {DType::uint16, 0, 1000, 1001},
      {DType::uint16, 60000, 65535, 5536},
      {DType::uint16, 70000, 80000, 65536},  // every value below: no window
  };
  for (const Case& c : cases) {
    const auto p = problem_of(c.dtype, 1, HistogramBins::even(7, c.lo, c.hi));
    const detail::ValueWindow w = detail::value_window(p);
    const std::string what = std::string(dtype_name(c.dtype)) + " [" + std::to_string(c.lo) + ", " +
                             std::to_string(c.hi) + "]";
    EXPECT_EQ(w.rows, c.rows) << what;
    EXPECT_EQ(w.by_bits, c.rows == 65536) << what;
    ASSERT_EQ(w.slots.size(), w.counted()) << what;
    const std::vector<std::uint32_t> slots = detail::slot_table(p);
    std::vector<std::uint32_t> per_row(w.slots.size(), 0);
    for (std::uint32_t lane : {0u, 1u, 31u, 32u, 1023u})
      for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        const std::uint32_t row = detail::window_row(w, c.dtype, bits, lane);
        ASSERT_LT(row, w.slots.size()) << what << ", bits " << bits << ", lane " << lane;
        ASSERT_EQ(w.slots[row], slots[bits]) << what << ", bits " << bits << ", lane " << lane;
        if (lane == 0) ++per_row[row];
      }
    for (std::uint32_t r = 0; r < std::min(w.rows, w.counted()); ++r)
      ASSERT_EQ(per_row[r], 1u) << what << ", row " << r;         // one value each
    EXPECT_EQ(detail::by_bits(w, c.dtype).slots, slots) << what;  // the same values by bits
  }
}

// Packed counters carry into the 64-bit counts, one group per range over the whole input, so
// hot slots wrap their fields many times in a group — through single adds (spread values) and
// register runs (long stretches of one value). With 1 KiB of local memory and a hot-row table of
// 32 entries, each width forced in turn: 16-bit fields in two ranges of 511 rows (the last row
// of the first range odd, the NaN slot the last row of the second, even, beside no row), 8-bit
// and 5-bit fields in two ranges, 4-bit fields in one; with a table of 2 entries most hot rows
// find theirs taken and carry straight to the global counts, and with none all of them do.
TEST(HistogramOpenclFast, PackedCountersCarryExactly) {
  std::mt19937_64 rng(run_seed() + 13);
  const double hot[] = {500.5, 501.5, 502.5,  503.5,
                        250.0, -1.0,  2000.0, std::numeric_limits<double>::quiet_NaN()};
  const std::int64_t n = (std::int64_t{1} << 21) + 3;
  std::vector<float> values(static_cast<std::size_t>(n));
  std::uniform_real_distribution<double> u(-10, 1010);
  std::uniform_int_distribution<int> pick(0, 7);
  std::bernoulli_distribution spread(0.2);
  for (std::int64_t i = 0; i < n; ++i) {
    const bool first_half = i < n / 2;
    const double v = first_half ? (spread(rng) ? u(rng) : hot[pick(rng)]) : hot[(i >> 17) & 7];
    values[static_cast<std::size_t>(i)] = static_cast<float>(v);
  }
  const HistogramBins b = HistogramBins::even(1000, 0, 1000);
  auto p = problem_of(DType::float32, n, b);
  std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
  detail::histogram_reference(values.data(), p, expected.data());
  for (const char* fields : {"field_bits=16", "field_bits=8", "field_bits=5", "field_bits=4",
                             "field_bits=5,histogram.opencl.hot_entries=2",
                             "field_bits=4,histogram.opencl.hot_entries=0"}) {
    const std::string setting = std::string(
                                    "histogram.fast.striped_kib=1,histogram.fast.max_passes=40,"
                                    "histogram.opencl.packed=1,histogram.opencl.hot_entries=32,"
                                    "histogram.fast.groups_per_cu=1,histogram.fast.block=256,"
                                    "histogram.opencl.") +
                                fields;
    ScopedTuning tuning(setting);
    for (const auto& d : devices()) {
      if (d.backend() != Backend::opencl) continue;
      Array in = Array::from_host(d, DType::float32, {n}, values.data());
      HistogramResult r = histogram(in, b, {"fast"});
      r.counts.insert(r.counts.end(), {r.underflow, r.overflow, r.nan});
      EXPECT_EQ(r.counts, expected) << setting << ", seed " << run_seed();
    }
  }
}
#endif

#ifdef PARPAT_HAVE_CUDA
// CUDA's packed 16-bit rows take most adds without a carry check and drain each row of 4096 or
// more into the 64-bit counts after every window of values. Two hot rows take nearly every value,
// about 2^17 a block, far past one field's 2^16; the first value a warp loads is spread, so the
// warp vote never routes them through runs: every add goes through the unchecked path.
TEST(HistogramCudaFast, PackedRowsDrainExactly) {
  const std::vector<Device> gpus = cuda_devices();
  if (gpus.empty()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(run_seed() + 17);
  const std::int64_t n = (std::int64_t{1} << 25) + 5;
  std::vector<float> values(static_cast<std::size_t>(n));
  std::uniform_real_distribution<double> u(-10, 1010);
  for (std::int64_t i = 0; i < n; ++i) {
    const bool leads = i % 128 == 0;  // the first value of a warp's load of 32 vectors
    values[static_cast<std::size_t>(i)] =
        static_cast<float>(leads ? u(rng) : (i % 2 ? 500.7 : 250.3));
  }
  const HistogramBins b = HistogramBins::even(65536, 0, 1000);
  auto p = problem_of(DType::float32, n, b);
  std::vector<std::uint64_t> expected(static_cast<std::size_t>(p.slots()));
  detail::histogram_reference(values.data(), p, expected.data());
  // The same values every other element of a larger array (NaN between them), read in place.
  std::vector<float> spaced(values.size() * 2, NAN);
  for (std::size_t i = 0; i < values.size(); ++i)
    spaced[2 * i] = values[i];
  for (const auto& d : gpus) {
    Array in = Array::from_host(d, DType::float32, {n}, values.data());
    HistogramResult r = histogram(in, b, {"fast"});
    r.counts.insert(r.counts.end(), {r.underflow, r.overflow, r.nan});
    EXPECT_EQ(r.counts, expected) << "seed " << run_seed();
    const Array all = Array::from_host(d, DType::float32, {2 * n}, spaced.data());
    r = histogram(Array::strided_view(all.buffer(), DType::float32, {n}, {2}), b, {"fast"});
    r.counts.insert(r.counts.end(), {r.underflow, r.overflow, r.nan});
    EXPECT_EQ(r.counts, expected) << "every other element, seed " << run_seed();
  }
}

// CUDA `fast` under its tuning values: no warp vote in shared memory, few columns, more 16-bit
// columns than striped_kib holds, packed counters off, rows sorted into buckets, global counting,
// little shared memory (passes; 16-bit input counted per value in passes).
INSTANTIATE_TEST_SUITE_P(
    CudaTunings, HistogramFastTunings,
    ::testing::ValuesIn(tuned_devices(
        [](const Device& d) { return d.backend() == Backend::cuda; },
        {"histogram.fast.vote_below_columns=0",
         "histogram.fast.striped_kib=1,histogram.fast.packed=0",
         "histogram.fast.max_passes=0,histogram.fast.block=96",
         "histogram.fast.max_passes=0,histogram.fast.bucketed=0", "histogram.fast.shared_kib=16",
         "histogram.fast.shared_kib=48,histogram.fast.per_value16_min_bins=1000",
         // Striped rows permuted for every input but 1-byte (the default: bfloat16 only).
         "histogram.fast.permuted_rows=2,histogram.fast.max_columns=4",
         // 16-bit input in as many columns as the shared memory holds, past striped_kib.
         "histogram.fast.striped_kib=1,histogram.fast.min_columns_16bit=32"})),
    tuned_device_name);

#endif

}  // namespace
}  // namespace parpat::test
