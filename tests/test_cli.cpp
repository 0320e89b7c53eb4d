// The command line: the JSON contract of `parpat reduce` (checked against numpy when python3
// has it, else against the CPU reference), and every bad input of DESIGN.md §5 giving exit
// status 2 with exactly one line on stderr.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "parpat/io.hpp"
#include "parpat/reduce.hpp"
#include "reduce/reduce_internal.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

using nlohmann::json;

std::string write_random(const std::string& name, DType t, std::vector<std::int64_t> shape,
                         std::uint64_t seed) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  std::vector<unsigned char> bytes(static_cast<std::size_t>(n) * dtype_size(t));
  std::mt19937_64 rng(seed);
  visit_dtype(t, [&](auto v) {
    using T = decltype(v);
    T* p = reinterpret_cast<T*>(bytes.data());
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(rng));
      } else {
        p[i] = static_cast<T>(rng() % 1000);
      }
    }
  });
  std::string path = temp_path(name);
  write_npy(path, t, shape, bytes.data());
  return path;
}

double number(const json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == "nan") return std::nan("");
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}

TEST(Cli, ReduceJsonContractMatchesNumpy) {
  const char* ops[] = {"sum", "prod", "min", "max", "argmin", "argmax"};
  const DType types[] = {DType::boolean, DType::int8,    DType::uint8,  DType::int16,
                         DType::uint16,  DType::int32,   DType::uint32, DType::int64,
                         DType::uint64,  DType::float32, DType::float64};
  std::uint64_t seed = run_seed();
  int k = 0;
  for (DType t : types) {
    std::string file =
        write_random(std::string("r") + dtype_name(t) + ".npy", t, {1000 + k}, seed + k);
    ++k;
    for (const char* op : ops) {
      SCOPED_TRACE(std::string(op) + " " + dtype_name(t) + ", seed " + std::to_string(seed));
      CliResult r = run_cli(std::string("reduce --backend cpu --json --op ") + op + " " + file);
      ASSERT_EQ(r.status, 0) << r.err;
      json j = json::parse(r.out);
      for (const char* key : {"pattern", "op", "dtype", "shape", "axis", "backend", "device",
                              "variant", "result", "time_ms"})
        EXPECT_TRUE(j.contains(key)) << key;
      EXPECT_EQ(j["pattern"], "reduce");
      EXPECT_EQ(j["op"], op);
      EXPECT_EQ(j["dtype"], dtype_name(t));
      EXPECT_EQ(j["axis"], "all");
      EXPECT_EQ(j["backend"], "cpu");
      EXPECT_EQ(j.contains("index"), std::string(op).rfind("arg", 0) == 0);
      if (!python_numpy_available()) continue;
      std::string expr = std::string("np.") + op + "(x)";
      std::string expected =
          run_python("import numpy as np\nx = np.load('" + file + "')\nprint(repr(" +
                     (std::string(op).rfind("arg", 0) == 0 ? "int(" + expr + ")"
                      : is_float(t)                        ? "float(" + expr + ")"
                                                           : "int(" + expr + ")") +
                     "))\n");
      if (std::string(op).rfind("arg", 0) == 0) {
        EXPECT_EQ(j["index"].get<std::int64_t>(), std::stoll(expected));
      } else if (is_float(t)) {
        double e = std::stod(expected), g = number(j["result"]);
        EXPECT_NEAR(g, e, 1e-5 * std::max(1.0, std::fabs(e))) << r.out;
      } else if (j["result"].is_boolean()) {  // min and max of bool
        EXPECT_EQ(t, DType::boolean);
        EXPECT_EQ(j["result"].get<bool>() ? 1 : 0, std::stoll(expected));
      } else if (!is_signed_integer(t) && t != DType::boolean) {
        // numpy's unsigned sums and products wrap modulo 2^64 as parpat's do.
        EXPECT_EQ(j["result"].get<std::uint64_t>(), std::stoull(expected));
      } else {
        EXPECT_EQ(j["result"].get<std::int64_t>(), std::stoll(expected));
      }
    }
  }
}

TEST(Cli, ReduceAxisAndNonFiniteJson) {
  std::vector<float> v = {1, NAN, 3, -INFINITY, 5, 6};
  std::string file = temp_path("nan.npy");
  write_npy(file, DType::float32, {2, 3}, v.data());
  CliResult r = run_cli("reduce --backend cpu --json --op max --axis rows " + file);
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_TRUE(j["result"].is_array());
  EXPECT_EQ(j["result"][0], "nan");
  EXPECT_EQ(j["result"][1].get<double>(), 6.0);
  r = run_cli("reduce --backend cpu --json --op argmin --axis cols " + file);
  ASSERT_EQ(r.status, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["index"], json({1, 0, 0}));  // -inf, the first NaN, the first of 3 and 6
  EXPECT_EQ(j["result"][0], "-inf");
  EXPECT_EQ(j["result"][1], "nan");
  EXPECT_EQ(j["result"][2].get<double>(), 3.0);
  EXPECT_EQ(j["shape"], json({2, 3}));
}

// A 3-D file with numpy's axes: interleaved (0,2), negative, keepdims, and the text answer.
TEST(Cli, ReduceAxesOfA3DFile) {
  std::vector<std::int32_t> v(24);
  for (int i = 0; i < 24; ++i)
    v[static_cast<std::size_t>(i)] = i;  // x[i][j][k] = 12 i + 4 j + k
  std::string file = temp_path("cube.npy");
  write_npy(file, DType::int32, {2, 3, 4}, v.data());
  for (const char* backend : {"cpu", "opencl"}) {
    if (std::string(backend) == "opencl" &&
        std::none_of(devices().begin(), devices().end(),
                     [](const Device& d) { return d.backend() == Backend::opencl; }))
      continue;
    SCOPED_TRACE(backend);
    const std::string reduce = std::string("reduce --json --backend ") + backend + " ";
    CliResult r = run_cli(reduce + "--op sum --axis 0,2 " + file);
    ASSERT_EQ(r.status, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["shape"], json({2, 3, 4}));
    EXPECT_EQ(j["axis"], json({0, 2}));
    EXPECT_EQ(j["keepdims"], false);
    EXPECT_EQ(j["result_shape"], json({3}));
    EXPECT_EQ(j["result"], json({60, 92, 124}));  // Σ over i, k of 12 i + 4 j + k
    r = run_cli(reduce + "--op argmax --axis=-2 --keepdims " + file);
    ASSERT_EQ(r.status, 0) << r.err;
    j = json::parse(r.out);
    EXPECT_EQ(j["axis"], json({1}));
    EXPECT_EQ(j["result_shape"], json({2, 1, 4}));
    EXPECT_EQ(j["index"], json({2, 2, 2, 2, 2, 2, 2, 2}));
    EXPECT_EQ(j["result"], json({8, 9, 10, 11, 20, 21, 22, 23}));
    r = run_cli(reduce + "--op max --axis none --keepdims " + file);
    ASSERT_EQ(r.status, 0) << r.err;
    j = json::parse(r.out);
    EXPECT_EQ(j["axis"], "all");
    EXPECT_EQ(j["result_shape"], json({1, 1, 1}));
    EXPECT_EQ(j["result"], json({23}));
  }
  CliResult text = run_cli("reduce --backend cpu --op min --axis 1 " + file);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("of int32 2x3x4"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("[1, 3] 15\n"), std::string::npos) << text.out;
}

// Subnormal float64 results are values like any other, in JSON too.
TEST(Cli, SubnormalResultsPrintExactly) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  std::vector<double> v = {3 * tiny, 5 * tiny, 2 * tiny, 1.0};
  std::string file = temp_path("subnormal.npy");
  write_npy(file, DType::float64, {4}, v.data());
  CliResult r = run_cli("reduce --backend cpu --json --op argmin " + file);
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["index"], 2);
  EXPECT_EQ(j["result"].get<double>(), 2 * tiny);
  std::string rows = temp_path("subnormal_rows.npy");
  write_npy(rows, DType::float64, {2, 2}, v.data());
  r = run_cli("reduce --backend cpu --json --op min --axis rows " + rows);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["result"], json({3 * tiny, 2 * tiny}));
}

TEST(Cli, ReadsEveryNpyVersionNumpyWrites) {
  if (!python_numpy_available()) GTEST_SKIP() << "python3 with numpy is not installed";
  for (const char* version : {"(1, 0)", "(2, 0)", "(3, 0)"}) {
    std::string file = temp_path(std::string("v") + version[1] + ".npy");
    run_python(
        "import numpy as np\nx = np.arange(1, 101, dtype=np.int64).reshape(4, 25)\n"
        "with open('" +
        file +
        "', 'wb') as f:\n"
        "    np.lib.format.write_array(f, x, version=" +
        version + ")\n");
    CliResult r = run_cli("reduce --backend cpu --json --op sum --axis rows " + file);
    ASSERT_EQ(r.status, 0) << version << ": " << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["result"], json({325, 950, 1575, 2200})) << version;
  }
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string npy_header(const std::string& dict) {
  std::string h = dict;
  std::size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>(h.size() >> 8));
  return out + h;
}

// The big-endian twin of a little-endian .npy file: '>' in its descr, every item's bytes reversed.
std::string big_endian_copy(const std::string& path, DType t) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t data = static_cast<std::size_t>(bytes.find('\n') + 1);
  const std::size_t order = bytes.find("'<");
  EXPECT_LT(order, data);
  bytes[order + 1] = '>';
  const std::size_t item = dtype_size(t);
  for (std::size_t at = data; at + item <= bytes.size(); at += item)
    std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                 bytes.begin() + static_cast<std::ptrdiff_t>(at + item));
  const std::string copy = path.substr(0, path.size() - 4) + "_be.npy";
  write_bytes(copy, bytes);
  return copy;
}

// The Fortran-order twin of a C-order .npy file of `shape`: 'fortran_order': True, the items
// in Fortran order (the first axis fastest).
std::string fortran_copy(const std::string& path, DType t, const std::vector<std::int64_t>& shape) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t data = static_cast<std::size_t>(bytes.find('\n') + 1);
  const std::size_t flag = bytes.find("'fortran_order': False");
  EXPECT_LT(flag, data);
  std::string header = bytes.substr(0, data);
  header.replace(flag, 22, "'fortran_order': True ");  // the same length: the padding holds
  const std::size_t item = dtype_size(t);
  std::string out = header + std::string(bytes.size() - data, '\0');
  std::vector<std::int64_t> index(shape.size(), 0);
  const std::size_t n = (bytes.size() - data) / item;
  for (std::size_t c = 0; c < n; ++c) {  // C-order position c, index `index`
    std::size_t f = 0, stride = 1;
    for (std::size_t k = 0; k < shape.size(); ++k) {
      f += static_cast<std::size_t>(index[k]) * stride;
      stride *= static_cast<std::size_t>(shape[k]);
    }
    out.replace(data + f * item, item, bytes, data + c * item, item);
    for (std::size_t k = shape.size(); k-- > 0;)
      if (++index[k] < shape[k])
        break;
      else
        index[k] = 0;
  }
  const std::string copy = path.substr(0, path.size() - 4) + "_f.npy";
  write_bytes(copy, out);
  return copy;
}

// A Fortran-order .npy file (numpy.save of a transposed array) gives the answers of its C-order
// twin over every axis form: read whole, in small chunks, from a pipe and big-endian too.
TEST(Cli, FortranOrderNpyFilesAreReadInCOrder) {
  int k = 0;
  for (DType t : {DType::uint8, DType::int32, DType::float32, DType::float64}) {
    SCOPED_TRACE(dtype_name(t));
    const std::vector<std::int64_t> shape = {5, 7, 11};
    const std::string c_order = write_random(std::string("c_") + dtype_name(t) + ".npy", t, shape,
                                             80 + static_cast<std::uint64_t>(k++));
    const std::string fortran = fortran_copy(c_order, t, shape);
    for (const char* args :
         {"reduce --op sum", "reduce --op argmax --axis 1", "reduce --op max --axis 0,2",
          "reduce --op sum --axis 2 --keepdims", "histogram --bins 10 --range 0 1000"}) {
      SCOPED_TRACE(args);
      const std::string cpu = cli_path() + " " + args + " --backend cpu --json ";
      auto answer = [](const CliResult& r) {
        EXPECT_EQ(r.status, 0) << r.err;
        const json j = json::parse(r.status == 0 ? r.out : "{}");
        json kept;
        for (const char* key : {"result", "index", "counts", "underflow", "overflow", "shape"})
          if (j.contains(key)) kept[key] = j[key];
        return kept;
      };
      // Each way of reading against the C-order file read the same way (float sums depend on
      // the chunks).
      const std::string chunked = "PARPAT_TUNING=stream.chunk_kib=1 ";
      std::vector<std::pair<std::string, std::string>> ways = {
          {cpu + fortran, cpu + c_order},
          {chunked + cpu + fortran, chunked + cpu + c_order},
          {cpu + "- < " + fortran, cpu + "- < " + c_order}};
      if (dtype_size(t) > 1) ways.emplace_back(cpu + big_endian_copy(fortran, t), cpu + c_order);
      for (const auto& [got, want] : ways) {
        SCOPED_TRACE(got);
        EXPECT_EQ(answer(run_command(got)), answer(run_command(want)));
      }
    }
  }
}

// parse_npy puts a Fortran-order array in C order: [[0, 1, 2], [3, 4, 5]] stored column by column.
TEST(Npy, FortranOrderBytesComeBackInCOrder) {
  const std::int32_t fortran[] = {0, 3, 1, 4, 2, 5};
  const std::string bytes =
      npy_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }") +
      std::string(reinterpret_cast<const char*>(fortran), sizeof fortran);
  HostArray a = parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), "f");
  ASSERT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(std::vector<std::int32_t>(a.as<std::int32_t>(), a.as<std::int32_t>() + 6),
            (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
}

// A big-endian .npy file gives the answers of its little-endian twin, read whole, streamed in
// small chunks and from a pipe: its bytes are swapped on the way in.
TEST(Cli, BigEndianNpyFilesAreByteSwapped) {
  int k = 0;
  for (DType t : {DType::int16, DType::uint16, DType::int32, DType::uint32, DType::int64,
                  DType::float32, DType::float64}) {
    SCOPED_TRACE(dtype_name(t));
    const std::string little = write_random(std::string("le_") + dtype_name(t) + ".npy", t,
                                            {37, 111}, 40 + static_cast<std::uint64_t>(k++));
    const std::string big = big_endian_copy(little, t);
    for (const char* args : {"reduce --op sum", "reduce --op argmax", "reduce --op max --axis rows",
                             "histogram --bins 10 --range 0 1000"}) {
      SCOPED_TRACE(args);
      const bool histogram = std::strncmp(args, "histogram", 9) == 0;
      if (histogram && (t == DType::int16 || t == DType::uint32 || t == DType::int64)) continue;
      const std::string cpu = std::string(args) + " --backend cpu --json ";
      CliResult want = run_cli(cpu + little);
      ASSERT_EQ(want.status, 0) << want.err;
      auto answer = [](const std::string& out) {
        const json j = json::parse(out);
        json kept;
        for (const char* key :
             {"result", "index", "counts", "underflow", "overflow", "nan", "dtype"})
          if (j.contains(key)) kept[key] = j[key];
        return kept;
      };
      CliResult whole = run_cli(cpu + big);
      ASSERT_EQ(whole.status, 0) << whole.err;
      EXPECT_EQ(answer(whole.out), answer(want.out));
      CliResult chunks =
          run_command("PARPAT_TUNING=stream.chunk_kib=1 " + cli_path() + " " + cpu + big);
      ASSERT_EQ(chunks.status, 0) << chunks.err;
      EXPECT_EQ(answer(chunks.out), answer(want.out));
      CliResult piped = run_command(cli_path() + " " + cpu + "- < " + big);
      ASSERT_EQ(piped.status, 0) << piped.err;
      EXPECT_EQ(answer(piped.out), answer(want.out));
    }
  }
}

TEST(Cli, BadInputIsOneLineAndExitTwo) {
  std::string good = write_random("good.npy", DType::float32, {16}, 1);
  std::string data(64, '\0');
  std::string truncated = temp_path("truncated.npy");
  write_bytes(truncated, npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (16,), }") +
                             data.substr(0, 10));
  std::string lying = temp_path("lying.npy");
  write_bytes(lying,
              npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }") + data);
  std::string corrupt = temp_path("corrupt.npy");
  write_bytes(corrupt, "\x93NUMPX garbage that is not a header");
  std::string garbled = temp_path("garbled.npy");
  write_bytes(garbled, npy_header("this is not a dict at all") + data);
  std::string complex_file = temp_path("complex.npy");
  write_bytes(complex_file,
              npy_header("{'descr': '<c8', 'fortran_order': False, 'shape': (8,), }") + data);
  std::string three_d = temp_path("3d.npy");
  write_bytes(three_d,
              npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4), }") + data);
  std::string empty = temp_path("empty.npy");
  write_bytes(empty, npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }"));

  expect_rejected("reduce --op sum " + temp_path("missing.npy"), "cannot open");
  expect_rejected("reduce --op sum " + truncated, "truncated");
  expect_rejected("reduce --op sum " + lying, "header promises");
  expect_rejected("reduce --op sum " + corrupt, "bad magic");
  expect_rejected("reduce --op sum " + garbled, "not a dict");
  expect_rejected("reduce --op sum " + complex_file, "unsupported dtype");
  expect_rejected("reduce --op sum --axis 3 " + three_d,
                  "axis 3 is out of bounds for array of dimension 3");
  expect_rejected("reduce --op sum --axis=-4 " + three_d, "axis -4 is out of bounds");
  expect_rejected("reduce --op sum --axis 0,-3 " + three_d, "duplicate value in 'axis'");
  expect_rejected("reduce --op sum --axis 0,x " + three_d, "unknown axis '0,x'");
  expect_rejected("reduce --op sum --axis 0, " + three_d, "unknown axis");
  expect_rejected("reduce --op argmax --axis 0,1 " + three_d, "argmax takes one axis");
  expect_rejected("reduce --op sum --axis rows " + three_d, "needs 2-D");
  expect_rejected("reduce --backend cpu --devices cpu,cpu --op sum --axis 0,2 " + three_d,
                  "interleave");
  for (const char* shape : {"(4,,4)", "(4 4)", "(16)"}) {
    std::string odd = temp_path("odd_shape.npy");
    write_bytes(odd, npy_header(std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") +
                                shape + ", }") +
                         data);
    expect_rejected("reduce --op sum " + odd, "shape");
  }
  expect_rejected("reduce --backend cpu --op min " + empty, "empty");
  // ddof at least the values of a result: numpy warns and returns NaN (0 / 0 here) or inf.
  expect_rejected("reduce --backend cpu --op var " + empty,
                  "var with ddof=0 over 0 values per result: no degrees of freedom left (numpy "
                  "warns and returns nan)");
  expect_rejected("reduce --backend cpu --op nanstd --ddof 4 --axis 2 " + three_d,
                  "nanstd with ddof=4 over 4 values per result");
  expect_rejected("reduce --backend cpu --op std --ddof 16 " + good, "returns inf");
  EXPECT_EQ(run_cli("reduce --backend cpu --op var --ddof 3.5 --axis 2 " + three_d).status, 0);
  expect_rejected("reduce --backend cpu --op nansum --ddof 1 " + good, "--ddof applies to var");
  expect_rejected("reduce --backend cpu --op argmax " + empty, "empty");
  expect_rejected("reduce --op median " + good, "unknown op");
  expect_rejected("reduce --op sum --axis depth " + good, "unknown axis");
  expect_rejected("reduce --op sum --axis rows " + good, "needs 2-D");
  expect_rejected("reduce --backend cpu --variant warp-magic --op sum " + good,
                  "unknown reduce variant");
  expect_rejected("reduce --backend tpu --op sum " + good, "unknown backend");
  expect_rejected("reduce --backend cpu --device 7 --op sum " + good, "no device 7");
  expect_rejected("reduce " + good, "--op");
  expect_rejected("frobnicate", "unknown command 'frobnicate' (the commands: info, list, reduce");
  expect_rejected("bincount " + good, "numpy.bincount is `parpat histogram --per-value`");
  expect_rejected("", "a command is required (the commands: info, list, reduce");
}

// PARPAT_TUNING is input too: a value its key does not take stops every command up front.
TEST(Cli, ABadTuningOverrideIsOneLineAndExitTwo) {
  std::string good = write_random("tuned.npy", DType::float32, {16}, 3);
  ScopedTuning tuning("reduce.fast.block=-1");
  expect_rejected("reduce --backend cpu --op sum " + good, "PARPAT_TUNING: 'reduce.fast.block=-1'");
  expect_rejected("bench reduce --backend cpu --quick", "a power of two from 32 to 1024");
}

TEST(Cli, EmptySumIsZeroAndProdIsOne) {
  std::string empty = temp_path("empty_ok.npy");
  write_bytes(empty, npy_header("{'descr': '<i4', 'fortran_order': False, 'shape': (0,), }"));
  CliResult r = run_cli("reduce --backend cpu --json --op sum " + empty);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["result"], 0);
  r = run_cli("reduce --backend cpu --json --op prod " + empty);
  EXPECT_EQ(json::parse(r.out)["result"], 1);
}

// --density gives numpy's density=True: count / bin width / the bins' total (the value above
// the range is not in it): 2 / 0.25 / 5 = 1.6 and 1 / 0.25 / 5 = 0.8, as numpy computes them.
TEST(Cli, HistogramDensityIsNumpys) {
  const double values[] = {0.1, 0.2, 0.25, 0.7, 0.9, 1.5};
  std::string path = temp_path("density.npy");
  write_bytes(path, npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }") +
                        std::string(reinterpret_cast<const char*>(values), sizeof values));
  for (const char* backend : {"cpu", "cuda", "opencl"}) {
    const std::string args =
        std::string("histogram --bins 4 --range 0 1 --density --backend ") + backend + " ";
    CliResult r = run_cli(args + "--json " + path);
    if (r.status != 0 && std::string(backend) != "cpu") continue;  // backend not present
    SCOPED_TRACE(backend);
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["counts"], json::array({2, 1, 1, 1}));
    EXPECT_EQ(j["overflow"], 1);
    ASSERT_EQ(j["density"].size(), 4u);
    EXPECT_EQ(j["density"][0].get<double>(), 2.0 / 0.25 / 5);
    for (int i = 1; i < 4; ++i)
      EXPECT_EQ(j["density"][i].get<double>(), 1.0 / 0.25 / 5);
    r = run_cli(args + "--csv " + path);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind("left,right,density\n0,0.25,1.6\n", 0), 0u) << r.out;
  }
}

// A range of no width, given or found, widens to [v - 0.5, v + 0.5] as numpy's does:
// numpy.histogram([0, 0.2, 1], bins=2, range=(0, 0)) counts [0, 2] over [-0.5, 0, 0.5].
TEST(Cli, HistogramEmptyRangeWidensAsNumpys) {
  const double values[] = {0.0, 0.2, 1.0};
  std::string path = temp_path("empty_range.npy");
  write_bytes(path, npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }") +
                        std::string(reinterpret_cast<const char*>(values), sizeof values));
  CliResult r = run_cli("histogram --bins 2 --range 0 0 --backend cpu --json " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["range"], json::array({-0.5, 0.5}));
  EXPECT_EQ(j["counts"], json::array({0, 2}));
  EXPECT_EQ(j["overflow"], 1);
  r = run_cli("histogram --bins 2 --range 1 0 --backend cpu --json " + path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("lo < hi"), std::string::npos) << r.err;
}

TEST(Cli, InfoAndListDescribeWhatIsBuilt) {
  CliResult r = run_cli("list reduce --json");
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  bool cpu_default = false;
  for (auto& v : j["variants"])
    cpu_default |= v["backend"] == "cpu" && v["default"] == true;
  EXPECT_TRUE(cpu_default);
  r = run_cli("info --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out)["devices"].empty());
  expect_rejected("list teleport", "unknown pattern");
}

// `parpat info --measure` gives every device its two peaks and the floor of a short case: an
// empty launch, and on CUDA also the same launch inside a graph.
TEST(Cli, InfoMeasuresPeaksAndTheLaunchFloor) {
  CliResult r = run_cli("info --measure --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json info = json::parse(r.out);
  for (const auto& d : info["devices"]) {
    SCOPED_TRACE(d.dump());
    EXPECT_GT(d["read_gbps"].get<double>(), 0);
    EXPECT_GT(d["fma_gflops"].get<double>(), 0);
    EXPECT_GT(d["launch_us"].get<double>(), 0);
    EXPECT_EQ(d["graph_launch_us"].get<double>() > 0, d["backend"] == "cuda");
    EXPECT_EQ(d["release_fence_us"].get<double>() > 0, d["backend"] == "cuda");
    EXPECT_EQ(d["l2_round_trip_us"].get<double>() > 0, d["backend"] == "cuda");
  }
}

// `parpat bench` verifies every row it times and says how it timed it: where there are no
// graphs (OpenCL, the CPU), short cases too are single launches.
TEST(Cli, BenchVerifiesEveryRowAndNamesItsTiming) {
  std::string out = temp_path("bench.json");
  for (const auto& d : devices()) {
    if (d.backend() == Backend::cuda) continue;  // the GPU suite runs the CUDA benches
    SCOPED_TRACE(d.label());
    CliResult r = run_cli(std::string("bench reduce --backend ") + backend_name(d.backend()) +
                          " --device " + std::to_string(d.info().index) +
                          " --variant fast --variant parallel --dtype float32 --sizes 1000 "
                          "--op sum --op var --op nanstd --graph-below-us 1e9 --json " +
                          out);
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(out);
    json rows = json::parse(in)["rows"];
    ASSERT_EQ(rows.size(), 3u);  // the ops asked for
    EXPECT_EQ(rows[1]["op"], "var");
    for (const auto& row : rows) {
      EXPECT_TRUE(row["verified"].get<bool>()) << row.dump();
      EXPECT_GT(row["time_ms"].get<double>(), 0) << row.dump();
      EXPECT_EQ(row["timing"], "launch") << row.dump();
    }
  }
}

// `--axis` picks the reduce cases: rows and cols alone give only the two matrix cases.
TEST(Cli, BenchAxisPicksTheMatrixCases) {
  std::string out = temp_path("bench-axis.json");
  CliResult r =
      run_cli("bench reduce --backend cpu --variant parallel --axis rows cols --json " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(out);
  json rows = json::parse(in)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["shape"], "4096x4096 rows");
  EXPECT_EQ(rows[1]["shape"], "4096x4096 cols");
  for (const auto& row : rows)
    EXPECT_TRUE(row["verified"].get<bool>()) << row.dump();
  EXPECT_EQ(run_cli("bench reduce --backend cpu --axis diagonal").status, 2);
}

// bench checks what it is asked for before it measures anything: one line, exit status 2.
TEST(Cli, BenchRefusesABadRequestBeforeMeasuring) {
  expect_rejected("bench bogus --backend cpu", "unknown pattern 'bogus'");
  expect_rejected("bench reduce --backend cpu --dtype bogus", "unknown dtype");
  expect_rejected("bench histogram --backend cpu --bins 0", "--bins 0");
  expect_rejected("bench histogram --backend cpu --bins 99999999999", "bin counts run from 1");
  expect_rejected("bench reduce --backend cpu --variant bogus --sizes 1000", "--variant bogus");
  expect_rejected("bench reduce --backend cpu --sizes 4611686018427387904", "sizes run from 1");
  expect_rejected("bench reduce --backend cpu --sizes 0", "--sizes 0");
  expect_rejected("bench reduce --backend cpu --sizes 1000 --json " + temp_path("no/such/dir.json"),
                  "cannot write");
  expect_rejected("bench reduce --backend cpu --device -2", "--device");
}

}  // namespace
}  // namespace parpat::test
