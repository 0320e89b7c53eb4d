// parpat bench io [--io-mib N] [--io-dir DIR] [--backend B] [--device I] [--json OUT]: the CLI
// end to end on files it writes, beside numpy, in the same run. Every number is the wall clock
// of a whole process (this binary through /proc/self/exe, python3, cat), the median of three
// runs after one warm-up, on files the warm-up left in the page cache: a float32 .npy of N MiB of
// uniform [0, 1) values and one of 1 KiB (the start-up floor). The large file is also streamed
// with PARPAT_TUNING=stream.chunk_kib=min(N·1024/8, half the default chunk), whose answer must
// equal the default run's (histogram counts identical, a float sum within 1e-6 relative); a
// mismatch or a failed command fails the bench (exit status 2) after the table and the JSON are
// out.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "stream/chunk_input.hpp"

extern char** environ;

namespace parpat::cli {

namespace {

// One process: argv[0] is a path (resolved before the fork, so the child only calls execve).
struct Command {
  Command(std::vector<std::string> args) : argv(std::move(args)) {}  // NOLINT: implicit on purpose
  std::vector<std::string> argv;
  std::string tuning;  // appended to PARPAT_TUNING when not empty
  bool discard_stdout = false;
};

struct Outcome {
  double wall_ms = 0;
  int status = -1;  // the exit status, or -1 when the child did not exit
  std::string out, err;
};

std::string find_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string all = path ? path : "/usr/bin:/bin";
  for (std::size_t begin = 0; begin <= all.size();) {
    std::size_t end = std::min(all.find(':', begin), all.size());
    std::string candidate = (end > begin ? all.substr(begin, end - begin) : ".") + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return "";
}

// Runs `c` with standard input from /dev/null, timing fork to reaped exit.
Outcome run(const Command& c) {
  std::vector<std::string> env_text;
  std::string tuning = c.tuning;
  for (char** e = environ; *e; ++e) {
    if (!tuning.empty() && std::strncmp(*e, "PARPAT_TUNING=", 14) == 0) {
      tuning = std::string(*e + 14) + "," + tuning;  // the last item of a key wins
      continue;
    }
    env_text.emplace_back(*e);
  }
  if (!tuning.empty()) env_text.push_back("PARPAT_TUNING=" + tuning);
  std::vector<char*> argv, envp;
  for (const auto& a : c.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw Error(ErrorKind::io, "bench io: cannot create a pipe");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw Error(ErrorKind::io, "bench io: cannot create a pipe");
  }
  int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  Outcome o;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(null_in, 0);
    ::dup2(c.discard_stdout ? null_out : out[1], 1);
    ::dup2(err[1], 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  for (int fd : {out[1], err[1], null_in, null_out})
    ::close(fd);
  if (pid < 0) {
    ::close(out[0]);
    ::close(err[0]);
    throw Error(ErrorKind::io, "bench io: cannot start " + c.argv[0]);
  }
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  for (int open_fds = 2; open_fds > 0;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t got = ::read(fds[k].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[k]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  o.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "no output" : line;
}

constexpr int kRuns = 3;  // timed, after one warm-up

// One command timed: the median of the runs' walls and of each JSON field, and the last answer.
struct Timed {
  bool ok = false;
  std::string note;  // why not ok
  double wall_ms = 0;
  std::vector<double> walls_ms;
  nlohmann::json answer;  // the last run's JSON (parpat, python)
  std::map<std::string, double> medians;
};

Timed time_command(const Command& c, bool json_answer) {
  Timed t;
  std::map<std::string, std::vector<double>> fields;
  for (int rep = 0; rep <= kRuns; ++rep) {
    Outcome o = run(c);
    if (o.status != 0) {
      t.note = fmt::format("exit {}: {}", o.status, first_line(o.err));
      return t;
    }
    if (json_answer) {
      try {
        t.answer = nlohmann::json::parse(o.out);
      } catch (const std::exception&) {
        t.note = "no JSON answer: " + first_line(o.out);
        return t;
      }
    }
    if (rep == 0) continue;  // the warm-up
    t.walls_ms.push_back(o.wall_ms);
    if (t.answer.is_object())
      for (auto& [key, value] : t.answer.items())
        if (value.is_number()) fields[key].push_back(value.get<double>());
  }
  t.ok = true;
  t.wall_ms = median(t.walls_ms);
  for (auto& [key, values] : fields)
    t.medians[key] = median(values);
  return t;
}

// A .npy file of float32 values, written a slice at a time; removed when this goes.
class NpyFile {
 public:
  NpyFile(const std::string& dir, std::uint64_t bytes, std::uint64_t seed) {
    path_ = dir + "/parpat-bench-io-XXXXXX.npy";
    int fd = ::mkstemps(path_.data(), 4);
    if (fd < 0) throw_invalid("--io-dir " + dir + ": cannot create a file there");
    const std::uint64_t n = bytes / 4;
    std::string header =
        fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", n);
    header.append(64 - (10 + header.size() + 1) % 64, ' ').push_back('\n');
    std::string head = std::string("\x93NUMPY\x01\x00", 8);
    head.push_back(static_cast<char>(header.size() & 0xff));
    head.push_back(static_cast<char>(header.size() >> 8));
    bool ok = put(fd, (head + header).data(), head.size() + header.size());
    std::vector<float> slice(std::size_t{1} << 22);
    std::uint64_t state = seed;
    for (std::uint64_t done = 0; ok && done < n;) {
      std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(slice.size(), n - done));
      for (std::size_t i = 0; i < k; ++i) {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);  // splitmix64
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        slice[i] = static_cast<float>((z ^ (z >> 31)) >> 40) * 0x1.0p-24f;  // [0, 1) exactly
      }
      ok = put(fd, slice.data(), k * 4);
      done += k;
    }
    ::close(fd);
    if (!ok) {
      ::unlink(path_.c_str());
      throw Error(ErrorKind::io, "bench io: cannot write " + path_ + " (disk full?)");
    }
  }
  ~NpyFile() { ::unlink(path_.c_str()); }
  NpyFile(const NpyFile&) = delete;
  NpyFile& operator=(const NpyFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  static bool put(int fd, const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      ssize_t n = ::write(fd, p, bytes);
      if (n <= 0) return false;
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
    return true;
  }
  std::string path_;
};

// np.load + the op, REPS times in one process; prints {"numpy", "times_ms"}.
const char* const kNumpyScript = R"(import json, sys, time
import numpy as np
op, path, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
times = []
for _ in range(reps):
    t = time.perf_counter()
    x = np.load(path)
    r = np.histogram(x, bins=1024, range=(0, 1))[0] if op == "histogram" else x.sum()
    times.append((time.perf_counter() - t) * 1e3)
print(json.dumps({"numpy": np.__version__, "times_ms": times}))
)";

// The first of $PARPAT_PYTHON, python3 on PATH, /usr/bin/python3 that imports numpy.
std::pair<std::string, std::string> find_numpy() {
  std::vector<std::string> names = {"python3", "/usr/bin/python3"};
  if (const char* env = std::getenv("PARPAT_PYTHON")) names.insert(names.begin(), env);
  for (const auto& name : names) {
    std::string path = find_in_path(name);
    if (path.empty()) continue;
    Outcome o = run({{path, "-c", "import numpy; print(numpy.__version__)"}});
    if (o.status == 0) return {path, first_line(o.out)};
  }
  return {};
}

std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), out;
  for (std::size_t begin = 0; begin < all.size();) {
    std::size_t end = std::min(all.find('\0', begin), all.size());
    std::string arg = all.substr(begin, end - begin);
    if (arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos) arg = "'" + arg + "'";
    out += (out.empty() ? "" : " ") + arg;
    begin = end + 1;
  }
  return out;
}

nlohmann::json build_info(const std::string& self) {
  nlohmann::json backends = nlohmann::json::array();
  for (Backend b : {Backend::cuda, Backend::opencl, Backend::cpu})
    if (backend_built(b)) backends.push_back(backend_name(b));
  Outcome v = run({{self, "--version"}});
#ifdef __clang__
  std::string compiler = "clang " __clang_version__;
#else
  std::string compiler = "gcc " __VERSION__;
#endif
  return {{"version", v.status == 0 ? first_line(v.out) : "unknown"},
          {"compiler", compiler},
          {"backends", backends},
#ifdef NDEBUG
          {"assertions", false}};
#else
          {"assertions", true}};
#endif
}

std::string ms(double v) {
  return v <= 0 ? "—" : v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
}

std::string rate(double v) {
  return v <= 0 ? "—" : fmt::format("{:.2f}", v);
}

std::string size_label(std::uint64_t bytes) {
  return bytes >= (1u << 20) ? fmt::format("{} MiB", bytes >> 20)
                             : fmt::format("{} KiB", bytes >> 10);
}

// Whether the capped run's answer equals the default run's.
std::string mismatch(const std::string& pattern, const nlohmann::json& a, const nlohmann::json& b) {
  if (pattern == "histogram") {
    for (const char* key : {"counts", "underflow", "overflow", "nan"})
      if (a.value(key, nlohmann::json()) != b.value(key, nlohmann::json()))
        return std::string("histogram ") + key + " differ from the default run's";
    return "";
  }
  const nlohmann::json& x = a.at("result");
  const nlohmann::json& y = b.at("result");
  if (!x.is_number() || !y.is_number())
    return x == y ? "" : "sums differ: " + x.dump() + " " + y.dump();
  double p = x.get<double>(), q = y.get<double>();
  if (std::abs(p - q) <= 1e-6 * std::abs(q)) return "";
  return fmt::format("sum {} differs from the default run's {} by more than 1e-6", p, q);
}

}  // namespace

void run_bench_io(const CommonOptions& common, std::int64_t mib, std::string dir,
                  const std::string& json_out, bool numpy) {
  // K = N MiB / 8 in KiB must be a value stream.chunk_kib takes (at most 2^22).
  if (mib < 1 || mib > 32768) throw_invalid("--io-mib runs from 1 to 32768 (MiB)");
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp && *tmp ? tmp : "/tmp";
  }
  const std::uint64_t bytes = static_cast<std::uint64_t>(mib) << 20;
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) throw_invalid("--io-dir " + dir + ": no such folder");
  if (static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize < bytes + (64u << 20))
    throw_invalid(fmt::format("--io-dir {}: {} MiB free, the bench needs {} MiB", dir,
                              static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize >> 20,
                              mib + 64));
  std::ofstream json_file;
  if (!json_out.empty()) {
    json_file.open(json_out);
    if (!json_file) throw_invalid("cannot write " + json_out);
  }
  Device device = common.open_device();
  const std::string self = "/proc/self/exe";
  const std::string backend = backend_name(device.backend());
  const std::string index = std::to_string(device.info().index);
  // The capped run: at least 8 chunks and half the backend's default chunk, so it always streams
  // the file through more, smaller chunks than the default run (device memory below the file's).
  const int chunk_kib = static_cast<int>(std::min<std::int64_t>(
      mib * 1024 / 8, detail::tuned<detail::StreamPolicy>(device.info()).chunk_kib / 2));
  std::cerr << fmt::format("parpat bench io on {}: writing {} and 1 KiB float32 .npy in {}\n",
                           device.label(), size_label(bytes), dir);
  NpyFile large(dir, bytes, 1), tiny(dir, 1024, 2);
  auto [python, numpy_version] =
      numpy ? find_numpy() : std::make_pair(std::string(), std::string());
  if (python.empty())
    std::cerr << (numpy ? "  numpy not found (python3 on PATH, /usr/bin/python3, $PARPAT_PYTHON): "
                          "numpy columns left out\n"
                        : "  numpy left out (--io-no-numpy)\n");

  struct Case {
    std::string pattern;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"histogram", {"histogram", "--bins", "1024", "--range", "0", "1"}},
      {"reduce", {"reduce", "--op", "sum"}}};
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::vector<std::string>> table;
  int failed = 0;
  Timed cat;
  if (std::string cat_path = find_in_path("cat"); !cat_path.empty()) {
    std::cerr << "  cat\n";
    Command c{{cat_path, large.path()}};
    c.discard_stdout = true;
    cat = time_command(c, false);
  }
  const double cat_gbps = cat.ok && cat.wall_ms > 0 ? bytes / cat.wall_ms / 1e6 : 0;
  for (const auto& k : cases) {
    // The tiny file first: its wall is the start-up floor the streaming rate leaves out.
    struct Run {
      std::string file;  // "1 KiB", "N MiB"
      const NpyFile* npy;
      int chunk_kib;
    };
    const std::vector<Run> runs = {{"1 KiB", &tiny, 0},
                                   {size_label(bytes), &large, 0},
                                   {size_label(bytes), &large, chunk_kib}};
    double floor_ms = 0;
    nlohmann::json uncapped;
    for (const auto& r : runs) {
      const std::string label =
          r.chunk_kib ? fmt::format("{}, chunks ≤ {}", r.file,
                                    size_label(static_cast<std::uint64_t>(r.chunk_kib) << 10))
                      : r.file;
      std::cerr << fmt::format("  {} {}\n", k.pattern, label);
      Command c{{self}};
      c.argv.insert(c.argv.end(), k.args.begin(), k.args.end());
      for (const char* a : {"--backend", backend.c_str(), "--device", index.c_str(), "--json",
                            "--no-progress", r.npy->path().c_str()})
        c.argv.emplace_back(a);
      if (r.chunk_kib) c.tuning = fmt::format("stream.chunk_kib={}", r.chunk_kib);
      Timed t = time_command(c, true);
      const std::uint64_t file_bytes = r.npy == &tiny ? 1024 : bytes;
      std::string args;
      for (const auto& a : k.args)
        args += (args.empty() ? "" : " ") + a;
      nlohmann::json row = {{"pattern", k.pattern},     {"args", args},
                            {"file", r.file},           {"file_bytes", file_bytes},
                            {"chunk_kib", r.chunk_kib}, {"runs", kRuns}};
      std::string status = "ok", note;
      if (!t.ok) {
        status = "failed";
        note = t.note;
      } else if (r.chunk_kib && uncapped.is_null()) {
        note = "not compared: the default run failed";
      } else if (r.chunk_kib) {
        note = mismatch(k.pattern, t.answer, uncapped);
        if (!note.empty()) status = "mismatch";
      }
      if (r.npy == &large && !r.chunk_kib && t.ok) uncapped = t.answer;
      if (r.npy == &tiny) floor_ms = t.wall_ms;
      double stream_gbps = 0;
      if (r.npy == &large && t.ok && t.wall_ms > floor_ms && floor_ms > 0)
        stream_gbps = file_bytes / (t.wall_ms - floor_ms) / 1e6;
      if (t.ok) {
        row["wall_ms"] = t.wall_ms;
        row["walls_ms"] = t.walls_ms;
        row["child_wall_ms"] = t.medians["wall_ms"];  // from its own start, as it reports
        for (const char* f : {"startup_ms", "time_ms", "read_GBps", "transfer_GBps"})
          row[f] = t.medians[f];
        row["chunks"] = static_cast<std::int64_t>(t.medians["chunks"]);
        row["passes"] = static_cast<std::int64_t>(t.medians["passes"]);
        if (r.npy == &large) row["stream_GBps"] = stream_gbps;
      }
      // numpy on the same file, but not again for the capped run (the same work for numpy).
      Timed np_inside, np_wall;
      if (!python.empty() && !r.chunk_kib) {
        Command inside{{python, "-c", kNumpyScript, k.pattern, r.npy->path(), "4"}};
        Outcome o = run(inside);
        try {
          auto j = nlohmann::json::parse(o.out);
          auto times = j.at("times_ms").get<std::vector<double>>();
          np_inside.ok = o.status == 0 && times.size() > 1;
          if (np_inside.ok)  // the first run is the warm-up
            np_inside.wall_ms = median(std::vector<double>(times.begin() + 1, times.end()));
        } catch (const std::exception&) {
          np_inside.note = first_line(o.err);
        }
        np_wall = time_command({{python, "-c", kNumpyScript, k.pattern, r.npy->path(), "1"}}, true);
        if (np_inside.ok) row["numpy_ms"] = np_inside.wall_ms;
        if (np_wall.ok) row["numpy_wall_ms"] = np_wall.wall_ms;
        if (np_wall.ok && t.ok) row["numpy_over_parpat"] = np_wall.wall_ms / t.wall_ms;
        if (!np_inside.ok || !np_wall.ok)
          row["numpy_note"] = first_line(np_inside.note + np_wall.note);
      }
      row["status"] = status;
      if (!note.empty()) row["note"] = note;
      failed += status != "ok";
      rows.push_back(row);
      auto get = [&](const char* f) { return t.ok ? t.medians[f] : 0.0; };
      table.push_back(
          {k.pattern, label, t.ok ? fmt::format("{:.0f}", get("chunks")) : "", ms(t.wall_ms),
           ms(get("startup_ms")), ms(get("time_ms")), rate(get("read_GBps")),
           rate(get("transfer_GBps")), rate(stream_gbps), ms(np_inside.ok ? np_inside.wall_ms : 0),
           ms(np_wall.ok ? np_wall.wall_ms : 0),
           np_wall.ok && t.ok ? fmt::format("{:.2f}", np_wall.wall_ms / t.wall_ms) : "—",
           status + (note.empty() ? "" : ": " + note)});
    }
  }

  nlohmann::json doc = {
      {"bench", "io"},
      {"device", device.info().name},
      {"backend", backend},
      {"device_label", device.label()},
      {"date", today()},
      {"command", command_line()},
      {"build", build_info(self)},
      {"io_mib", mib},
      {"file_bytes", bytes},
      {"dir", dir},
      {"runs", kRuns},
      {"python", python.empty() ? nlohmann::json() : nlohmann::json(python)},
      {"numpy", numpy_version.empty() ? nlohmann::json() : nlohmann::json(numpy_version)},
      {"rows", rows}};
  if (cat.ok)
    doc["cat"] = {{"wall_ms", cat.wall_ms}, {"walls_ms", cat.walls_ms}, {"GBps", cat_gbps}};
  if (json_file.is_open() && !(json_file << doc.dump(1) << "\n" << std::flush))
    throw_invalid("cannot write " + json_out);

  std::cout << fmt::format(
      "parpat bench io on {}: float32 .npy files in {}, wall clock of whole processes (ms), "
      "median of {} runs after a warm-up, files page-cached\n\n",
      device.label(), dir, kRuns);
  std::vector<std::string> header = {
      "command",    "file",           "chunks",        "wall",        "start-up",
      "kernel",     "read GB/s",      "transfer GB/s", "stream GB/s", "numpy in Python",
      "numpy wall", "numpy / parpat", "check"};
  std::string line = "|", rule = "|";
  for (std::size_t i = 0; i < header.size(); ++i) {
    line += " " + header[i] + " |";
    rule += i < 2 ? "---|" : (i + 1 == header.size() ? "---|" : "---:|");
  }
  std::cout << line << "\n" << rule << "\n";
  for (const auto& row : table) {
    std::string text = "|";
    for (const auto& cell : row)
      text += " " + cell + " |";
    std::cout << text << "\n";
  }
  std::cout << fmt::format(
      "\nstream GB/s: file bytes / (wall − wall on the 1 KiB file). numpy: np.load + "
      "np.histogram(x, bins=1024, range=(0, 1)) or x.sum(), {}.\n",
      !numpy           ? "left out (--io-no-numpy)"
      : python.empty() ? "not run (no python3 with numpy)"
                       : "python " + python + ", numpy " + numpy_version);
  if (cat.ok)
    std::cout << fmt::format(
        "cat FILE > /dev/null: {} ms, {:.2f} GB/s (one reader of the page cache)\n",
        ms(cat.wall_ms), cat_gbps);
  if (failed)
    throw Error(
        ErrorKind::backend,
        fmt::format("bench io: {} of {} rows failed (see the check column)", failed, rows.size()));
}

}  // namespace parpat::cli
