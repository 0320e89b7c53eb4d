// The ranks of the distributed commands: the MPI plugin (loaded with dlopen only under an MPI
// launcher), the device of each MPI rank (GPU ranks joined over NCCL), and the threads of
// --devices.
#include "ranks.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <thread>

#include "parpat/distributed.hpp"
#include "parpat/error.hpp"
#include "runtime/backends.hpp"

namespace parpat::cli {

namespace {

// How long a rank waits at a collective for the others (PARPAT_COLLECTIVE_TIMEOUT_S).
double collective_timeout() {
  const char* env = std::getenv("PARPAT_COLLECTIVE_TIMEOUT_S");
  if (!env) return 600;
  char* end = nullptr;
  const double s = std::strtod(env, &end);
  if (end == env || *end || !(s > 0))
    throw_invalid(std::string("PARPAT_COLLECTIVE_TIMEOUT_S=") + env +
                  " is not a positive number of seconds");
  return s;
}

// The number of ranks an MPI launcher started, from its environment (0 when none did).
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

// The functions of libparpat_mpi.so (tools/parpat/mpi_plugin.cpp).
struct MpiPlugin {
  int (*start)(int*, int*, int*, int*);
  int (*all_gather)(const void*, std::size_t, void*, double);
  int (*all_reduce_sum)(std::uint64_t*, std::size_t, double);
  void (*describe)(int, double, char*, std::size_t);
  void (*finish)();
  void (*abort)(int);
};

std::string binary_folder() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  std::string s(path, static_cast<std::size_t>(n));
  return s.substr(0, s.rfind('/'));
}

MpiPlugin load_plugin() {
  std::string tried;
  void* lib = nullptr;
  for (const std::string& path :
       {binary_folder() + "/libparpat_mpi.so",
        binary_folder() + "/../" PARPAT_INSTALL_LIBDIR "/libparpat_mpi.so"}) {
    lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib) break;
    tried += std::string(tried.empty() ? "" : "; ") + ::dlerror();
  }
  if (!lib)
    throw Error(ErrorKind::unsupported, "started by an MPI launcher with " +
                                            std::to_string(launched_ranks()) +
                                            " ranks, but this parpat has no MPI engine (" + tried +
                                            "); build with MPI (Debian: libopenmpi-dev)");
  auto symbol = [lib](const char* name) {
    void* f = ::dlsym(lib, name);
    if (!f) throw Error(ErrorKind::unsupported, std::string("libparpat_mpi.so lacks ") + name);
    return f;
  };
  MpiPlugin p;
  p.start = reinterpret_cast<decltype(p.start)>(symbol("parpat_mpi_start"));
  p.all_gather = reinterpret_cast<decltype(p.all_gather)>(symbol("parpat_mpi_all_gather"));
  p.all_reduce_sum =
      reinterpret_cast<decltype(p.all_reduce_sum)>(symbol("parpat_mpi_all_reduce_sum"));
  p.describe = reinterpret_cast<decltype(p.describe)>(symbol("parpat_mpi_describe"));
  p.finish = reinterpret_cast<decltype(p.finish)>(symbol("parpat_mpi_finish"));
  p.abort = reinterpret_cast<decltype(p.abort)>(symbol("parpat_mpi_abort"));
  return p;
}

class PluginCommunicator final : public Communicator {
 public:
  PluginCommunicator(MpiPlugin plugin, double timeout) : plugin_(plugin), timeout_(timeout) {
    check(plugin_.start(&rank_, &size_, &local_rank_, &local_size_), "MPI_Init");
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return "mpi"; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }

  void all_gather(const void* data, std::size_t bytes, void* out) override {
    check(plugin_.all_gather(data, bytes, out, timeout_), "MPI_Iallgather");
  }
  void all_reduce_sum(std::uint64_t* values, std::size_t count) override {
    check(plugin_.all_reduce_sum(values, count, timeout_), "MPI_Iallreduce");
  }
  using Communicator::all_gather;

  void finish(int status, bool abort) const {
    if (abort)
      plugin_.abort(status);
    else
      plugin_.finish();
  }

 private:
  void check(int rc, const char* call) const {
    if (rc == 0) return;
    char text[256];
    plugin_.describe(rc, timeout_, text, sizeof text);
    throw Error(ErrorKind::backend, "rank " + std::to_string(rank_) + ": " + text, "mpi",
                rc == -1 ? "timeout" : call, rc);
  }

  MpiPlugin plugin_;
  double timeout_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

std::shared_ptr<PluginCommunicator>& world() {
  static std::shared_ptr<PluginCommunicator> w;
  return w;
}

// An MPI rank's device: --backend/--device as asked, except that without --device the ranks of
// one host take its GPUs in turn, and CPU ranks share the host's cores.
Device rank_device(const CommonOptions& common, const PluginCommunicator& comm) {
  const std::vector<DeviceInfo> present = list_devices();
  auto count_of = [&present](Backend b) {
    return static_cast<int>(std::count_if(present.begin(), present.end(),
                                          [b](const DeviceInfo& d) { return d.backend == b; }));
  };
  Backend backend = Backend::cuda;
  if (!common.backend.empty())
    backend = parse_backend(common.backend);
  else if (count_of(Backend::cuda) == 0)
    return common.open_device();
  if (backend == Backend::cpu) {
    // Each rank's pool takes its share of the cores unless PARPAT_TUNING says otherwise (its
    // items come later, so they win).
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const char* old = std::getenv("PARPAT_TUNING");
    std::string tuning =
        "cpu.pool.threads=" + std::to_string(std::max(1, cores / comm.local_size()));
    if (old && *old) tuning += std::string(",") + old;
    ::setenv("PARPAT_TUNING", tuning.c_str(), 1);
  }
  if (common.device >= 0 || backend == Backend::cpu)
    return Device::open(backend, std::max(common.device, 0));
  const int count = count_of(backend);
  return Device::open(backend, count > 0 ? comm.local_rank() % count : 0);
}

}  // namespace

std::string RankSummary::text() const {
  return engine.empty() ? "" : " over " + std::to_string(ranks) + " ranks (" + engine + ")";
}

void RankSummary::add_to(nlohmann::json& j) const {
  if (engine.empty()) return;
  j["ranks"] = ranks;
  j["engine"] = engine;
}

void RankFlags::add_to(CLI::App& app) {
  app.add_option("--devices", devices,
                 "run on several devices of this host, one rank each: cuda:0,cuda:1 or cuda:all "
                 "(also cpu, opencl:N); under mpirun each process is one rank instead");
}

std::shared_ptr<Communicator> mpi_world() {
  if (world()) return world();
  if (launched_ranks() <= 1) return nullptr;
  world() = std::make_shared<PluginCommunicator>(load_plugin(), collective_timeout());
  return world();
}

bool secondary_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v) != 0;
  return false;
}

void finish_ranks(int status, bool collective_timed_out) {
  if (world()) world()->finish(status, collective_timed_out);
}

void for_each_rank(const CommonOptions& common, const RankFlags& flags, const std::string& file,
                   const std::function<void(RankInput&)>& step) {
  if (!flags.devices.empty()) {
    if (launched_ranks() > 1) throw_invalid("--devices does not combine with mpirun's ranks");
    detail::set_verbose(common.verbose);
    const auto start = std::chrono::steady_clock::now();
    std::vector<Device> devices;
    try {
      devices = open_devices(flags.devices);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::invalid_argument) throw;
      throw_invalid(std::string("--devices: ") + e.what());
    }
    const auto comms = device_communicators(devices, collective_timeout());
    const double startup = ms_since(start);  // devices and communicators (NCCL's set-up)
    on_ranks(comms, [&](Communicator& comm) {
      RankInput in;
      in.comm = &comm;
      on_every_rank(comm, [&] {
        in.opened = OpenedInput{common.open_source(file),
                                devices[static_cast<std::size_t>(comm.rank())], startup};
      });
      step(in);
    });
    return;
  }
  auto comm = mpi_world();
  RankInput in;
  if (!comm) {
    in.opened = open_input(common, file);
    step(in);
    return;
  }
  detail::set_verbose(common.verbose);
  on_every_rank(*comm, [&] {
    const auto start = std::chrono::steady_clock::now();
    Device device = rank_device(common, *world());
    const double startup = ms_since(start);
    in.opened = OpenedInput{common.open_source(file), device, startup};
  });
  // GPU ranks of distinct GPUs join NCCL through MPI; the others stay on MPI.
  const auto joining = std::chrono::steady_clock::now();
  const auto rank_comm = rank_communicator(in.opened->device, comm, collective_timeout());
  in.opened->startup_ms += ms_since(joining);  // NCCL's set-up
  in.comm = rank_comm.get();
  step(in);
}

}  // namespace parpat::cli
