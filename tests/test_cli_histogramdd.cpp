// The command line's joint histograms: `parpat histogramdd` and `parpat histogram2d` against
// numpy.histogramdd and numpy.histogram2d (counts exactly, weighted sums and densities within a
// tolerance) on the CPU and, where present, OpenCL; the CSV and the listing; and bad input giving
// exit status 2 with one line on stderr.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "parpat/io.hpp"
#include "test_support.hpp"

namespace parpat::test {
namespace {

using nlohmann::json;

TEST(HistogramddCli, AgreesWithNumpy) {
  if (!python_numpy_available()) GTEST_SKIP() << "python3 with numpy is not available";
  const std::string dir = temp_path("joint");
  // xy: normal samples with NaN, ±inf and values on the edges of the ranges the cases give;
  // xc/yc: samples on a grid of 0.25 (ties with the data's own edges), for the ranges found
  // from the data (numpy refuses those of NaN data); xyz: float32 in three dimensions.
  run_python("import numpy as np, os; os.makedirs('" + dir + "', exist_ok=True); os.chdir('" + dir +
             "'); r = np.random.default_rng(" + std::to_string(run_seed()) +
             "); n = 20011\n"
             "xy = r.normal(size=(n, 2)) * [1.0, 1.5]\n"
             "xy[:6, 0] = np.linspace(-2, 2, 6); xy[6:12, 1] = np.linspace(-3, 3, 6)\n"
             "xy[12, 0] = np.nan; xy[13, 1] = np.nan; xy[14] = np.nan\n"
             "xy[15, 0] = np.inf; xy[16, 1] = -np.inf; xy[17:20] = [0.4, 0.6]\n"
             "xyc = np.round(r.normal(size=(n, 2)) * 4) / 4\n"
             "xyz = (r.random((n, 3)) * 1.4 - 0.2).astype(np.float32)\n"
             "xyz[:5] = [[0, 0.25, 0.5], [0.5, 0.75, 1], [1, 1, 0.2], [0.4, 0.6, 0.8], "
             "[np.nan, 0.5, 0.5]]\n"
             "np.save('xy.npy', xy); np.save('x.npy', xy[:, 0].copy()); "
             "np.save('y.npy', xy[:, 1].copy()); np.save('xyc.npy', xyc)\n"
             "np.save('xc.npy', xyc[:, 0].copy()); np.save('yc.npy', xyc[:, 1].copy())\n"
             "np.save('xyz.npy', xyz); np.save('w.npy', r.random(n))\n"
             "np.save('xyi.npy', r.integers(-5, 12, size=(n, 2)).astype(np.int32))\n"
             "np.save('e0.npy', np.array([-3, -1, -0.5, 0, 0.4, 2.5]))");
  struct Case {
    std::string args, numpy, field;
  };
  const std::vector<Case> cases = {
      {"histogramdd --bins 5 --range -2:2,-3:3 xy.npy",
       "np.histogramdd(xy, bins=5, range=[(-2, 2), (-3, 3)])", "counts"},
      {"histogram2d --bins 4,6 xc.npy yc.npy", "np.histogram2d(xc, yc, bins=[4, 6])", "counts"},
      {"histogramdd --bins 3,4,5 --range 0:1 xyz.npy",
       "np.histogramdd(xyz, bins=[3, 4, 5], range=[(0, 1)] * 3)", "counts"},
      {"histogramdd --edges e0.npy, --bins 3 --range 0:1,-3:3 xy.npy",
       "np.histogramdd(xy, bins=[e0, 3], range=[(0, 1), (-3, 3)])", "counts"},
      {"histogramdd --bins 6,4 xyi.npy", "np.histogramdd(xyi, bins=[6, 4])", "counts"},
      {"histogramdd --bins 7 xc.npy", "np.histogramdd(xc, bins=7)", "counts"},
      {"histogram2d --bins 5 --range -2:2,-3:3 --weights w.npy x.npy y.npy",
       "np.histogram2d(x, y, bins=5, range=[(-2, 2), (-3, 3)], weights=w)", "sums"},
      {"histogramdd --density --bins 4,5 --range -2:2,-3:3 xy.npy",
       "np.histogramdd(xy, bins=[4, 5], range=[(-2, 2), (-3, 3)], density=True)", "density"},
      {"histogram2d --density --weights w.npy --bins 3 xyc.npy",
       "np.histogram2d(xyc[:, 0], xyc[:, 1], bins=3, weights=w, density=True)", "density"},
  };
  const std::string load =
      "import numpy as np, json, os; os.chdir('" + dir +
      "')\nfor name in ['xy', 'x', 'y', 'xyc', 'xc', 'yc', 'xyz', 'w', 'xyi', 'e0']: "
      "globals()[name] = np.load(name + '.npy')\n";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const json want = json::parse(
        run_python(load + "h = " + c.numpy +
                   "[0]; print(json.dumps({'v': [float(v) for v in h.ravel()], 'shape': "
                   "list(h.shape), 'n': len(np.load('" +
                   c.args.substr(c.args.rfind(' ') + 1) + "'))}))"));
    for (const std::string& backend : cli_backends()) {
      SCOPED_TRACE(backend);
      CliResult r = run_command("cd " + dir + " && " + cli_path() + " " + c.args +
                                " --json --backend " + backend);
      ASSERT_EQ(r.status, 0) << r.err;
      const json got = json::parse(r.out);
      EXPECT_EQ(got["pattern"], c.args.substr(0, c.args.find(' ')));
      EXPECT_EQ(got["backend"], backend);
      EXPECT_EQ(got["n"], want["n"]);
      EXPECT_EQ(got["shape"], want["shape"]);
      EXPECT_EQ(got["dims"], want["shape"].size());
      EXPECT_EQ(got["bins"].size(), want["shape"].size());
      EXPECT_EQ(got.contains("weighted"), c.args.find("--weights") != std::string::npos);
      const json& values = got[c.field];
      ASSERT_EQ(values.size(), want["v"].size());
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = want["v"][i].get<double>();
        if (c.field == "counts") {
          EXPECT_EQ(values[i].get<std::uint64_t>(), static_cast<std::uint64_t>(v)) << "bin " << i;
          total += values[i].get<std::uint64_t>();
        } else {
          EXPECT_NEAR(values[i].get<double>(), v, 1e-9 * (1 + std::fabs(v))) << "bin " << i;
        }
      }
      if (c.field == "counts")
        EXPECT_EQ(got["outside"].get<std::uint64_t>() + total, want["n"].get<std::uint64_t>());
    }
  }
  // Edges and ranges per dimension, as resolved.
  CliResult r = run_command("cd " + dir + " && " + cli_path() +
                            " histogramdd --json --backend cpu --edges e0.npy, --range 0:1,-3:3 "
                            "xy.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  const json bins = json::parse(r.out)["bins"];
  EXPECT_EQ(bins[0], json({{"edges", {-3, -1, -0.5, 0, 0.4, 2.5}}}));
  EXPECT_EQ(bins[1], json({{"range", {-3, 3}}}));
}

// A dimension's range of no width widens to [v - 0.5, v + 0.5], as numpy's histogramdd does.
TEST(HistogramddCli, EmptyRangeWidensAsNumpys) {
  const std::string x = temp_path("widen_x.npy"), y = temp_path("widen_y.npy");
  const std::vector<double> xs = {0, 0.25, 2}, ys = {0, 1, 1};
  write_npy(x, DType::float64, {3}, xs.data());
  write_npy(y, DType::float64, {3}, ys.data());
  CliResult r = run_cli("histogram2d --json --backend cpu --bins 2 --range 0:0,0:2 " + x + " " + y);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["bins"][0], json({{"range", {-0.5, 0.5}}}));
  // x 0 and 0.25 → bin 1 (0 is the inner edge), 2 outside; y 0 → bin 0, 1 → bin 1.
  EXPECT_EQ(j["counts"], json({0, 0, 1, 1}));
  EXPECT_EQ(j["outside"], 1);
}

// Small data of known bins, written here: the JSON fields, the CSV and the listing.
TEST(HistogramddCli, CsvAndListing) {
  const std::string x = temp_path("joint_x.npy"), y = temp_path("joint_y.npy");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> xs = {0, 0.5, 1, 1.5, 2, nan, 3}, ys = {0, 0, 1, 1, 2, 0, 0};
  write_npy(x, DType::float64, {7}, xs.data());
  write_npy(y, DType::float64, {7}, ys.data());
  const std::string args = " --backend cpu --bins 2 --range 0:2 " + x + " " + y;
  CliResult r = run_cli("histogram2d --json" + args);
  ASSERT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out);
  // x 0, 0.5 → bin 0; 1, 1.5, 2 → bin 1; y 0 → 0, 1 and 2 → 1 (2 is the last edge).
  EXPECT_EQ(j["counts"], json({2, 0, 0, 3}));
  EXPECT_EQ(j["outside"], 2);
  EXPECT_EQ(j["dtype"], "float64");
  for (const char* field : {"variant", "time_ms", "wall_ms", "startup_ms", "device"})
    EXPECT_TRUE(j.contains(field)) << field;
  r = run_cli("histogram2d --csv --density" + args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "left0,right0,left1,right1,density\n0,1,0,1,0.4\n0,1,1,2,0\n1,2,0,1,0\n"
            "1,2,1,2,0.6\n");
  r = run_cli("histogram2d" + args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("histogram2d of 7 float64 samples in 2 dimensions (2×2 bins)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("samples in no bin (outside or NaN) 2"), std::string::npos) << r.out;
  // Weighted, with all-NaN densities: no sample in a bin.
  r = run_cli("histogramdd --json --backend cpu --density --range 5:6 --weights " + x + " " + y);
  ASSERT_EQ(r.status, 0) << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["weighted"], true);
  EXPECT_EQ(j["density"][0], "nan");
  EXPECT_EQ(j["outside"], "nan");  // x's NaN is among the weights
}

TEST(HistogramddCli, BadInputIsOneLineAndStatus2) {
  const std::vector<double> v(12, 0.5);
  const std::vector<std::int32_t> ints(6, 1);
  auto file = [](const std::string& name, DType dtype, std::vector<std::int64_t> shape,
                 const void* data) {
    const std::string path = temp_path(name);
    write_npy(path, dtype, shape, data);
    return path;
  };
  const std::string xy = file("bad_xy.npy", DType::float64, {6, 2}, v.data()),
                    x6 = file("bad_x6.npy", DType::float64, {6}, v.data()),
                    x5 = file("bad_x5.npy", DType::float64, {5}, v.data()),
                    i6 = file("bad_i6.npy", DType::int32, {6}, ints.data()),
                    cube = file("bad_cube.npy", DType::float64, {2, 3, 2}, v.data()),
                    wide = file("bad_wide.npy", DType::float64, {1, 9}, v.data()),
                    w5 = file("bad_w5.npy", DType::float64, {5}, v.data());
  expect_rejected("histogramdd --bins 3,4,5 " + xy, "--bins has 3 entries for 2 dimensions");
  expect_rejected("histogramdd --bins 0 " + xy, "--bins");
  expect_rejected("histogramdd --bins 4,x " + xy, "--bins");
  expect_rejected("histogramdd --range 0-1 " + xy, "--range takes LO:HI");
  expect_rejected("histogramdd --range 1:0 " + xy, "--range takes LO:HI");
  expect_rejected("histogramdd --range 0:1,0:1,0:1 " + xy, "--range has 3 entries");
  expect_rejected("histogramdd --edges " + cube + " " + xy, "--edges needs a 1-D array");
  expect_rejected("histogramdd " + cube, "3-D data");
  expect_rejected("histogramdd " + x6 + " " + x5, "differ in length");
  expect_rejected("histogram2d " + x6 + " " + i6, "differ in dtype");
  expect_rejected("histogramdd --weights " + w5 + " " + x6, "--weights");
  expect_rejected("histogramdd --weights " + i6 + " " + x6, "weights must be float32 or float64");
  expect_rejected("histogramdd " + wide, "1 to 8 dimensions, got 9");
  expect_rejected("histogram2d " + x6, "histogram2d takes X.npy Y.npy or one (N, 2) file");
  expect_rejected("histogram2d " + x6 + " " + x6 + " " + x6, "got 3 dimensions");
  expect_rejected("histogramdd --json --csv " + xy, "exclude each other");
  expect_rejected("histogramdd " + temp_path("missing.npy"), "missing.npy");
}

}  // namespace
}  // namespace parpat::test
