// The streamed command line: `parpat reduce --json` and `parpat histogram --json` against numpy
// on every kind of input (a .npy file, standard input through a pipe, raw bytes, a deflated
// .npz, a member of a stored .npz) with chunks forced small; every bad streamed input giving exit
// status 2 and one line on stderr; and the resident memory of a 4 GiB input on the CPU.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "parpat/device.hpp"
#include "test_support.hpp"

namespace parpat::test {

// The parpat binary (test_support.cpp; run_cli puts it first on its command line, and these
// tests need it after a pipe or /usr/bin/time).
std::string cli_path();

namespace {

using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command line in which {parpat} stands for the binary; stdout and stderr of the
// whole line are captured (the pipeline's status is the last command's, parpat's).
CliResult run_line(std::string line) {
  static int counter = 0;
  for (auto at = line.find("{parpat}"); at != std::string::npos; at = line.find("{parpat}"))
    line.replace(at, 8, cli_path());
  std::string out = temp_path("line" + std::to_string(counter) + ".out");
  std::string err = temp_path("line" + std::to_string(counter++) + ".err");
  int raw = std::system(("(" + line + ") >" + out + " 2>" + err).c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Exit status 2, exactly one line on stderr naming the problem, nothing on stdout.
void expect_line_rejected(const std::string& line, const std::string& fragment) {
  SCOPED_TRACE(line);
  expect_rejected(run_line(line), fragment);
}

double number(const json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (s == "nan") return std::nan("");
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return j.get<double>();
}

// The inputs, written by numpy from the run's seed, and numpy's answers for them.
class CliStream : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!python_numpy_available()) return;
    dir_ = temp_path("cli_stream");
    ::mkdir(dir_.c_str(), 0700);
    const std::string script = R"PY(
import json, struct, zipfile
import numpy as np
d = DIR
rng = np.random.default_rng(SEED)
a = rng.standard_normal((37, 333)).astype(np.float32)
i = rng.integers(-1000, 1001, size=20011).astype(np.int32)
raw = rng.integers(0, 256, size=30011).astype(np.uint8)
b = rng.integers(-2**62, 2**62, size=5000, dtype=np.int64)
c = rng.integers(0, 256, size=7001).astype(np.uint8)
np.save(d + '/a.npy', a)
np.save(d + '/i.npy', i)
raw.tofile(d + '/raw.bin')
i.tofile(d + '/i.raw')
np.savez_compressed(d + '/one.npz', x=i)
np.savez(d + '/many.npz', a=a, b=b, c=c)
for name, compress in (('one.npz', zipfile.ZIP_DEFLATED), ('many.npz', zipfile.ZIP_STORED)):
    with zipfile.ZipFile(d + '/' + name) as z:
        assert all(m.compress_type == compress for m in z.infolist()), name
# A deflated member with bytes flipped in the middle of its compressed data.
np.savez_compressed(d + '/corrupt.npz', x=rng.integers(0, 50, size=200000).astype(np.int32))
with zipfile.ZipFile(d + '/corrupt.npz') as z:
    m = z.infolist()[0]
with open(d + '/corrupt.npz', 'r+b') as f:
    f.seek(m.header_offset + 26)
    name_len, extra_len = struct.unpack('<HH', f.read(4))
    mid = m.header_offset + 30 + name_len + extra_len + m.compress_size // 2
    f.seek(mid)
    block = f.read(16)
    f.seek(mid)
    f.write(bytes(x ^ 0xA5 for x in block))
with open(d + '/notzip.npz', 'w') as f:
    f.write('this is not a zip archive\n')
np.save(d + '/pa.npy', rng.standard_normal(100).astype(np.float32))
np.save(d + '/pb.npy', rng.standard_normal(50).astype(np.float32))

def answer(x, op, axis):
    ax = None if axis == 'all' else (1 if axis == 'rows' else 0)
    r = getattr(np, op)(x, axis=ax)
    out = {'value': np.asarray(r).tolist()}
    if op == 'sum' and x.dtype.kind == 'f':
        out['value'] = np.sum(x.astype(np.float64), axis=ax).tolist()
        out['magnitude'] = np.sum(np.abs(x.astype(np.float64)), axis=ax).tolist()
    return out

ops = ['sum', 'min', 'max', 'argmin', 'argmax']
exp = {}
for name, x in (('a', a), ('i', i), ('raw', raw), ('b', b), ('c', c)):
    for op in ops + (['prod'] if x.dtype.kind in 'iu' else []):
        for axis in (['all', 'rows', 'cols'] if x.ndim == 2 else ['all']):
            exp[name + '|' + op + '|' + axis] = answer(x, op, axis)

# N-D files and numpy's axes: answers flat in C order, with the result's shape.
n = rng.standard_normal((6, 35, 41)).astype(np.float32)
m = rng.integers(-50, 51, size=(3, 4, 5, 6)).astype(np.int32)
np.save(d + '/n.npy', n)
np.save(d + '/m.npy', m)
for name, x, forms in (('n', n, ['none', '0', '-1', '1,2', '0,2', '2,0', '0,1']),
                       ('m', m, ['0,2', '-1,1', '3', '1,2,3'])):
    for op in ('sum', 'max', 'argmin', 'mean'):
        for form in forms:
            ax = None if form == 'none' else tuple(int(a) for a in form.split(','))
            if op == 'argmin':
                if ax is not None and len(ax) != 1:
                    continue
                ax = None if ax is None else ax[0]
            for keepdims in (False, True):
                r = getattr(np, op)(x, axis=ax, keepdims=keepdims)
                out = {'value': np.asarray(r).ravel().tolist(), 'shape': list(np.shape(r))}
                if op in ('sum', 'mean') and x.dtype.kind == 'f':
                    wide = x.astype(np.float64)
                    out['value'] = np.asarray(getattr(np, op)(wide, axis=ax)).ravel().tolist()
                    out['magnitude'] = np.asarray(getattr(np, op)(np.abs(wide), axis=ax)).ravel().tolist()
                exp['|'.join(('nd', name, op, form, str(keepdims)))] = out

def hist(x, bins, rng_=None):
    counts, edges = np.histogram(x, bins=bins, range=rng_)
    lo, hi = (float(x.min()), float(x.max())) if rng_ is None else rng_
    return {'counts': counts.tolist(), 'lo': lo, 'hi': hi,
            'underflow': int((x < lo).sum()), 'overflow': int((x > hi).sum())}

exp['hist|a|range'] = hist(a, 10, (-2.0, 2.0))
exp['hist|a|auto'] = hist(a, 10)
exp['hist|i|range'] = hist(i, 7, (-900.0, 900.0))
exp['hist|i|auto'] = hist(i, 13)
exp['hist|raw|per'] = {'counts': np.bincount(raw, minlength=256).tolist()}
exp['hist|c|per'] = {'counts': np.bincount(c, minlength=256).tolist()}
print(json.dumps(exp))
)PY";
    std::string code = script;
    code.replace(code.find("DIR"), 3, "'" + dir_ + "'");
    code.replace(code.find("SEED"), 4, std::to_string(run_seed()));
    std::string out = run_python(code);
    try {
      expected_ = json::parse(out);
    } catch (const std::exception&) {
      failure_ = "numpy could not make the inputs: " + out;
    }
  }

  void SetUp() override {
    if (!python_numpy_available()) GTEST_SKIP() << "python3 with numpy is not installed";
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

 public:
  static std::string path(const std::string& name) { return dir_ + "/" + name; }
  static bool expected_has(const std::string& key) { return expected_.contains(key); }
  static const json& expected_at(const std::string& key) { return expected_.at(key); }

 protected:
  static std::string dir_;
  static json expected_;
  static std::string failure_;
};

std::string CliStream::dir_;
json CliStream::expected_;
std::string CliStream::failure_;

// The fields every streamed answer has; `chunks` more than one when they are forced small.
void expect_stream_fields(const json& j, int passes) {
  for (const char* key :
       {"wall_ms", "startup_ms", "read_GBps", "transfer_GBps", "chunks", "passes", "time_ms"})
    ASSERT_TRUE(j.contains(key)) << key << " missing from " << j.dump();
  EXPECT_GT(j["wall_ms"].get<double>(), 0);
  EXPECT_GE(j["startup_ms"].get<double>(), 0);
  EXPECT_LE(j["startup_ms"].get<double>(), j["wall_ms"].get<double>());
  EXPECT_GE(j["read_GBps"].get<double>(), 0);
  EXPECT_GE(j["transfer_GBps"].get<double>(), 0);
  EXPECT_GT(j["chunks"].get<std::int64_t>(), 1) << "chunks were forced to 1 KiB";
  EXPECT_EQ(j["passes"].get<int>(), passes);
}

// Compares one output of a reduce answer with numpy's.
void expect_value(const json& got, const json& want, const json& magnitude, const std::string& op,
                  const std::string& dtype, std::int64_t extent) {
  if (op == "argmin" || op == "argmax") {
    EXPECT_EQ(got.get<std::int64_t>(), want.get<std::int64_t>());
  } else if (dtype == "float32" || dtype == "float64" || op == "mean") {
    if (op == "sum" || op == "mean") {
      double tol = 1e-6 * std::max(1.0, std::log2(static_cast<double>(extent)));
      EXPECT_NEAR(number(got), want.get<double>(),
                  tol * std::max(std::fabs(want.get<double>()), magnitude.get<double>()));
    } else {
      // min and max print the shortest text of the float32 value: equal as float32.
      EXPECT_EQ(static_cast<float>(number(got)), static_cast<float>(want.get<double>()));
    }
  } else if (want.is_number_unsigned() && got.is_number_unsigned()) {
    EXPECT_EQ(got.get<std::uint64_t>(), want.get<std::uint64_t>());
  } else {
    EXPECT_EQ(got.get<std::int64_t>(), want.get<std::int64_t>());
  }
}

// `parpat reduce --json` on `source` ("FILE", or "PRODUCER |" for standard input through a pipe)
// against numpy's answers "KEY_OF|OP|AXIS", for every op and axis numpy answered.
void check_reduce(const std::string& backend, const std::string& source, const std::string& name,
                  const std::string& dtype, const std::vector<std::int64_t>& shape,
                  const std::string& key_of) {
  const bool two_d = shape.size() == 2;
  for (const char* op : {"sum", "prod", "min", "max", "argmin", "argmax"})
    for (const char* axis : {"all", "rows", "cols"}) {
      if (!two_d && std::string(axis) != "all") continue;
      std::string key = key_of + "|" + op + "|" + axis;
      if (!CliStream::expected_has(key)) continue;
      const bool piped = source.back() == '|';
      std::string line = (piped ? source + " " : "") + "{parpat} reduce --json --backend " +
                         backend + " --op " + op + " --axis " + axis + " " + (piped ? "-" : source);
      SCOPED_TRACE(line + " (" + name + ")");
      CliResult r = run_line(line);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_TRUE(r.err.empty()) << r.err;
      json j = json::parse(r.out);
      EXPECT_EQ(j["dtype"], dtype);
      EXPECT_EQ(j["shape"], json(shape));
      EXPECT_EQ(j["backend"], backend);
      expect_stream_fields(j, 1);
      const json& want = CliStream::expected_at(key);
      const bool arg = std::string(op).rfind("arg", 0) == 0;
      const json& got = arg ? j["index"] : j["result"];
      const std::int64_t extent = std::string(axis) == "all"    ? shape[0] * (two_d ? shape[1] : 1)
                                  : std::string(axis) == "rows" ? shape.back()
                                                                : shape[0];
      if (std::string(axis) == "all") {
        expect_value(got, want["value"], want.value("magnitude", json(0.0)), op, dtype, extent);
      } else {
        ASSERT_TRUE(got.is_array());
        ASSERT_EQ(got.size(), want["value"].size());
        for (std::size_t k = 0; k < got.size(); ++k) {
          SCOPED_TRACE("output " + std::to_string(k));
          expect_value(got[k], want["value"][k],
                       want.contains("magnitude") ? want["magnitude"][k] : json(0.0), op, dtype,
                       extent);
          if (::testing::Test::HasFailure()) return;
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
}

TEST_F(CliStream, ReduceJsonMatchesNumpyOnEveryKindOfInput) {
  ScopedTuning tuning("stream.chunk_kib=1");
  for (const std::string& backend : cli_backends()) {
    SCOPED_TRACE("--backend " + backend + ", seed " + std::to_string(run_seed()));
    check_reduce(backend, path("a.npy"), "a .npy file", "float32", {37, 333}, "a");
    check_reduce(backend, path("i.npy"), "a .npy file", "int32", {20011}, "i");
    check_reduce(backend, "cat " + path("i.npy") + " |", "standard input", "int32", {20011}, "i");
    check_reduce(backend, "cat " + path("a.npy") + " |", "standard input", "float32", {37, 333},
                 "a");
    check_reduce(backend, "cat " + path("raw.bin") + " |", "raw bytes on standard input", "uint8",
                 {30011}, "raw");
    check_reduce(backend, path("raw.bin"), "a raw file", "uint8", {30011}, "raw");
    check_reduce(backend, path("one.npz"), "a deflated .npz", "int32", {20011}, "i");
    check_reduce(backend, path("many.npz") + ":a", "a stored .npz member", "float32", {37, 333},
                 "a");
    check_reduce(backend, path("many.npz") + ":b.npy", "a stored .npz member", "int64", {5000},
                 "b");
    // Empty standard input: raw bytes, none of them.
    CliResult r =
        run_line("{parpat} reduce --json --backend " + backend + " --op sum - </dev/null");
    ASSERT_EQ(r.status, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["result"], 0);
    EXPECT_EQ(j["shape"], json({0}));
    if (HasFailure()) return;
  }
}

// Raw bytes read as another dtype (--dtype, numpy.fromfile's view), from a file and from a pipe,
// and the refusals: a length that is not a whole number of elements, an .npy file (its header
// has the dtype), an unknown dtype.
TEST_F(CliStream, RawInputReadAsAnyDtypeMatchesNumpy) {
  ScopedTuning tuning("stream.chunk_kib=1");
  for (const std::string& backend : cli_backends()) {
    SCOPED_TRACE("--backend " + backend + ", seed " + std::to_string(run_seed()));
    check_reduce(backend, "--dtype int32 " + path("i.raw"), "a raw file read as int32", "int32",
                 {20011}, "i");
    CliResult r = run_line("cat " + path("i.raw") + " | {parpat} reduce --json --backend " +
                           backend + " --op max --dtype int32 -");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["result"], CliStream::expected_at("i|max|all")["value"]);
    EXPECT_EQ(json::parse(r.out)["shape"], json({20011}));  // values, not bytes
    const std::string bins = " --json --bins 37 --range -1000 1000 --backend " + backend + " ";
    CliResult typed = run_line("{parpat} histogram" + bins + "--dtype int32 " + path("i.raw"));
    CliResult npy = run_line("{parpat} histogram" + bins + path("i.npy"));
    ASSERT_EQ(typed.status, 0) << typed.err;
    ASSERT_EQ(npy.status, 0) << npy.err;
    EXPECT_EQ(json::parse(typed.out)["counts"], json::parse(npy.out)["counts"]);
    if (HasFailure()) return;
  }
  const std::pair<std::string, std::string> refused[] = {
      {"{parpat} reduce --op sum --dtype float32 " + path("raw.bin"),
       "holds 30011 bytes, not a whole number of float32 elements of 4 bytes"},
      {"cat " + path("raw.bin") + " | {parpat} reduce --op sum --backend cpu --dtype int16 -",
       "its last int16 element is cut short (1 of 2 bytes)"},
      {"{parpat} histogram --dtype int32 " + path("i.npy"),
       "is an .npy array of int32: its header gives its dtype"},
      {"{parpat} reduce --op sum --dtype complex64 " + path("raw.bin"), "unknown dtype"}};
  for (const auto& [line, message] : refused) {
    SCOPED_TRACE(line);
    CliResult r = run_line(line);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// N-D files with numpy's axes: `--axis 0,2`, negative axes, none, --keepdims, from a file and
// from standard input, streamed as rows or columns where the axes allow and through device
// memory where they interleave.
TEST_F(CliStream, ReduceAxesOfNdFilesMatchNumpy) {
  ScopedTuning tuning("stream.chunk_kib=1");
  for (const std::string& backend : cli_backends())
    for (const auto& [name, shape] :
         {std::pair<std::string, std::vector<std::int64_t>>{"n", {6, 35, 41}}, {"m", {3, 4, 5, 6}}})
      for (const bool piped : {false, true})
        for (const char* op : {"sum", "max", "argmin", "mean"})
          for (const char* form :
               {"none", "0", "-1", "1,2", "0,2", "2,0", "0,1", "-1,1", "3", "1,2,3"})
            for (const bool keepdims : {false, true}) {
              const std::string key = std::string("nd|") + name + "|" + op + "|" + form + "|" +
                                      (keepdims ? "True" : "False");
              if (!expected_has(key) || (piped && keepdims)) continue;
              const std::string file = path(name + ".npy");
              const std::string line = (piped ? "cat " + file + " | " : "") +
                                       "{parpat} reduce --json --backend " + backend + " --op " +
                                       op + " --axis=" + form + (keepdims ? " --keepdims " : " ") +
                                       (piped ? "-" : file);
              SCOPED_TRACE(line + ", seed " + std::to_string(run_seed()));
              CliResult r = run_line(line);
              ASSERT_EQ(r.status, 0) << r.err;
              const json j = json::parse(r.out);
              const json& want = expected_at(key);
              EXPECT_EQ(j["shape"], json(shape));
              EXPECT_EQ(j["result_shape"], want["shape"]);
              EXPECT_EQ(j["keepdims"], keepdims);
              const bool arg = std::string(op) == "argmin";
              json got = arg ? j["index"] : j["result"];
              if (!got.is_array()) got = json::array({got});
              ASSERT_EQ(got.size(), want["value"].size());
              std::int64_t size = 1;
              for (auto e : shape)
                size *= e;
              const auto extent = size / static_cast<std::int64_t>(got.size());
              for (std::size_t k = 0; k < got.size(); ++k) {
                SCOPED_TRACE("output " + std::to_string(k));
                expect_value(got[k], want["value"][k],
                             want.contains("magnitude") ? want["magnitude"][k] : json(0.0), op,
                             j["dtype"].get<std::string>(), extent);
                if (HasFailure()) return;
              }
            }
}

// `parpat histogram --json` with and without a range, per value, on every kind of input.
TEST_F(CliStream, HistogramJsonMatchesNumpyOnEveryKindOfInput) {
  ScopedTuning tuning("stream.chunk_kib=1");
  struct Case {
    std::string line;  // {parpat} histogram ... (--json --backend B are added)
    std::string key;
    int passes;
  };
  const std::vector<Case> cases = {
      {"{parpat} histogram --bins 10 --range -2 2 " + path("a.npy"), "hist|a|range", 1},
      {"{parpat} histogram --bins 10 " + path("a.npy"), "hist|a|auto", 2},
      {"cat " + path("a.npy") + " | {parpat} histogram --bins 10 --range -2 2 -", "hist|a|range",
       1},
      // Standard input that is a regular file can be read twice.
      {"{parpat} histogram --bins 10 - < " + path("a.npy"), "hist|a|auto", 2},
      {"{parpat} histogram --bins 10 --range -2 2 " + path("many.npz") + ":a", "hist|a|range", 1},
      {"{parpat} histogram --bins 10 " + path("many.npz") + ":a", "hist|a|auto", 2},
      {"{parpat} histogram --bins 7 --range -900 900 " + path("i.npy"), "hist|i|range", 1},
      {"cat " + path("i.npy") + " | {parpat} histogram --bins 7 --range -900 900 -", "hist|i|range",
       1},
      {"{parpat} histogram --bins 7 --range -900 900 " + path("one.npz"), "hist|i|range", 1},
      // The range pass, then a second read of the deflated member.
      {"{parpat} histogram --bins 13 " + path("one.npz"), "hist|i|auto", 2},
      {"{parpat} histogram --bins 13 " + path("i.npy"), "hist|i|auto", 2},
      {"cat " + path("raw.bin") + " | {parpat} histogram -", "hist|raw|per", 1},
      {"{parpat} histogram " + path("raw.bin"), "hist|raw|per", 1},
      {"{parpat} histogram --per-value " + path("many.npz") + ":c", "hist|c|per", 1},
  };
  for (const std::string& backend : cli_backends())
    for (const Case& c : cases) {
      std::string line = c.line;
      line.replace(line.find("histogram") + 9, 0, " --json --backend " + backend);
      SCOPED_TRACE(line + ", seed " + std::to_string(run_seed()));
      CliResult r = run_line(line);
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_TRUE(r.err.empty()) << r.err;
      json j = json::parse(r.out);
      expect_stream_fields(j, c.passes);
      const json& want = CliStream::expected_at(c.key);
      EXPECT_EQ(j["counts"], want["counts"]);
      EXPECT_EQ(j["nan"], 0);
      if (want.contains("lo")) {
        EXPECT_EQ(j["underflow"], want["underflow"]);
        EXPECT_EQ(j["overflow"], want["overflow"]);
        ASSERT_TRUE(j.contains("range"));
        EXPECT_EQ(number(j["range"][0]), want["lo"].get<double>());
        EXPECT_EQ(number(j["range"][1]), want["hi"].get<double>());
      } else {
        EXPECT_EQ(j["underflow"], 0);
        EXPECT_EQ(j["overflow"], 0);
        EXPECT_EQ(j.value("per_value", false), true);
      }
      if (HasFailure()) return;
    }
}

TEST_F(CliStream, BadStreamedInputIsOneLineAndExitTwo) {
  ScopedTuning tuning("stream.chunk_kib=1");
  std::string truncated = path("truncated.npy");
  run_line("head -c 20000 " + path("i.npy") + " > " + truncated);
  for (const std::string& backend : cli_backends()) {
    const std::string reduce = "{parpat} reduce --backend " + backend + " --op sum ";
    const std::string hist = "{parpat} histogram --backend " + backend + " ";
    expect_line_rejected(reduce + truncated, "header promises");
    expect_line_rejected(reduce + "- < " + truncated, "header promises");
    expect_line_rejected("head -c 1000 " + path("i.npy") + " | " + reduce + "-", "ended early");
    expect_line_rejected("cat " + path("i.npy") + " " + path("i.npy") + " | " + reduce + "-",
                         "more data than the header promises");
    expect_line_rejected(reduce + path("many.npz") + ":nothing", "it holds: a, b, c");
    expect_line_rejected(reduce + path("many.npz"), "holds 3 arrays");
    expect_line_rejected(reduce + path("corrupt.npz"), path("corrupt.npz"));
    expect_line_rejected(hist + "--bins 4 --range 0 50 " + path("corrupt.npz"),
                         path("corrupt.npz"));
    expect_line_rejected(reduce + path("notzip.npz"), "not a valid .npz archive");
    expect_line_rejected(reduce + path("missing.npz"), "cannot open");
    expect_line_rejected(reduce + dir_, "is a directory");
    expect_line_rejected(reduce + "--axis rows - < /dev/null", "2-D");
    expect_line_rejected("cat " + path("raw.bin") + " | " + reduce + "--axis rows -", "2-D");
    expect_line_rejected("cat " + path("a.npy") + " | " + hist + "--bins 10 -",
                         "can be read only once");
    expect_line_rejected("cat " + path("i.npy") + " | " + hist + "--bins 10 -", "--range");
  }
  // A full disk when the answer is written.
  expect_line_rejected("{parpat} pairwise --backend cpu --kernel product " + path("pa.npy") + " " +
                           path("pb.npy") + " -o /dev/full",
                       "disk full");
}

// The CPU reads a file through mapped windows that it lets go chunk by chunk, so the resident
// memory of a 4 GiB input stays within the staging budget.
TEST(CliStreamMemory, A4GiBFileStaysWithinTheStagingBudget) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine are resident too";
#endif
  const std::string big = temp_path("sparse-4g.bin");
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{big};
  if (std::system(("truncate -s 4G " + big + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "the temporary filesystem cannot hold a 4 GiB sparse file";
  struct stat st {};
  if (::stat(big.c_str(), &st) != 0 || st.st_size != (off_t{1} << 32) ||
      st.st_blocks * 512 > (off_t{1} << 20))
    GTEST_SKIP() << "the temporary filesystem has no sparse files";
  ScopedTuning tuning("stream.staging_mib=128");
  const double budget_mib = 128 + 64;
  const std::string answer = temp_path("sparse-4g.json");
  const std::string rss = temp_path("sparse-4g.rss");
  const std::string args = " reduce --op sum --backend cpu --json " + big + " >" + answer;
  double max_rss_mib = -1;
  if (::access("/usr/bin/time", X_OK) == 0) {
    int raw = std::system(("/usr/bin/time -f %M -o " + rss + " " + cli_path() + args).c_str());
    ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << slurp(rss);
    max_rss_mib = std::stod(slurp(rss)) / 1024.0;  // KiB
  } else {
    // The largest of every child waited for so far: an upper bound on parpat's.
    int raw = std::system((cli_path() + args).c_str());
    ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0);
    struct rusage usage {};
    ::getrusage(RUSAGE_CHILDREN, &usage);
    max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  }
  std::cout << "[ measured ] parpat reduce of a 4 GiB file on the CPU: max RSS " << max_rss_mib
            << " MiB (staging 128 MiB)\n";
  RecordProperty("max_rss_mib", std::to_string(max_rss_mib));
  EXPECT_GT(max_rss_mib, 0);
  EXPECT_LE(max_rss_mib, budget_mib);
  json j = json::parse(slurp(answer));
  EXPECT_EQ(j["result"], 0);
  EXPECT_EQ(j["shape"], json({std::int64_t{1} << 32}));
  EXPECT_GT(j["chunks"].get<std::int64_t>(), 1);
  std::remove(answer.c_str());
}

}  // namespace
}  // namespace parpat::test
