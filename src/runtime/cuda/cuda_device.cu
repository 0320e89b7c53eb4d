#include "runtime/cuda/cuda_device.hpp"

#include <map>
#include <memory>
#include <vector>

#include "runtime/backends.hpp"

namespace parpat::detail {

void cuda_check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  std::string text = std::string(call) + ": " + cudaGetErrorString(status);
  throw Error(ErrorKind::backend, "CUDA error in " + text, "cuda", call, static_cast<int>(status));
}

void check_launch(const char* kernel) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) cuda_check(status, kernel);
}

namespace {

// Spins until the host sets *release, so the work queued behind it starts back to back and the
// events time the device alone. The spin gives up after 20 ms: a timed region that enqueues
// more launches than the launch queue holds makes the host wait on the device, and then the
// measurement falls back to including the host's launch time instead of stalling.
__global__ void block_stream(const volatile int* release) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(256);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (*release == 0 && now - start < 20000000ull);
}

DeviceInfo describe(int ordinal, const cudaDeviceProp& p) {
  DeviceInfo info;
  info.backend = Backend::cuda;
  info.index = ordinal;
  info.name = p.name;
  info.vendor = "NVIDIA";
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  info.architecture = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  info.version = "driver " + std::to_string(driver / 1000) + "." +
                 std::to_string(driver % 1000 / 10) + ", runtime " +
                 std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ", " +
                 info.architecture;
  info.compute_units = p.multiProcessorCount;
  info.global_memory = p.totalGlobalMem;
  info.local_memory = p.sharedMemPerBlockOptin;
  info.l2_cache = static_cast<std::uint64_t>(p.l2CacheSize);
  info.max_group_size = p.maxThreadsPerBlock;
  info.warp_size = p.warpSize;
  info.cooperative_launch = p.cooperativeLaunch != 0;
  info.independent_groups = true;
  return info;
}

}  // namespace

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal) {
  PARPAT_CUDA(cudaGetDeviceProperties(&props_, ordinal));
  info_ = describe(ordinal, props_);
  activate();
  PARPAT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  void* flag = nullptr;
  PARPAT_CUDA(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  release_flag_ = static_cast<volatile int*>(flag);
  *release_flag_ = 1;
  PARPAT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&release_flag_device_), flag, 0));
}

CudaDevice::~CudaDevice() {
  cudaSetDevice(ordinal_);
  if (graph_) cudaGraphExecDestroy(graph_);
  if (stream_) cudaStreamDestroy(stream_);
  if (release_flag_) cudaFreeHost(const_cast<int*>(release_flag_));
}

void CudaDevice::activate() const {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != ordinal_)
    PARPAT_CUDA(cudaSetDevice(ordinal_));
}

void* CudaDevice::allocate(std::size_t bytes) {
  activate();
  void* p = nullptr;
  cudaError_t status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(ErrorKind::backend,
                "cannot allocate " + std::to_string(bytes) + " bytes on " + info_.name + ": " +
                    cudaGetErrorString(status),
                "cuda", "cudaMalloc", static_cast<int>(status));
  }
  return p;
}

void CudaDevice::release(void* handle) noexcept {
  cudaSetDevice(ordinal_);
  cudaFree(handle);
}

namespace {

// The caller's stream of the calling thread, and the device it is for.
struct CallerStream {
  const CudaDevice* device = nullptr;
  cudaStream_t stream = nullptr;
};
thread_local CallerStream caller_stream;

}  // namespace

cudaStream_t CudaDevice::stream() const {
  return caller_stream.device == this ? caller_stream.stream : stream_;
}

void* CudaDevice::use_stream(void* native) {
  void* previous = caller_stream.device == this ? caller_stream.stream : nullptr;
  caller_stream = {native ? this : nullptr, static_cast<cudaStream_t>(native)};
  return previous;
}

void* CudaDevice::allocate_host(std::size_t bytes) {
  activate();
  void* p = nullptr;
  cudaError_t status = cudaMallocHost(&p, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw Error(ErrorKind::backend,
                "cannot allocate " + std::to_string(bytes) +
                    " bytes of page-locked host memory: " + cudaGetErrorString(status),
                "cuda", "cudaMallocHost", static_cast<int>(status));
  }
  return p;
}

void CudaDevice::release_host(void* host) noexcept {
  cudaFreeHost(host);
}

void CudaDevice::upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) {
  activate();
  PARPAT_CUDA(cudaMemcpyAsync(static_cast<char*>(handle) + offset, src, bytes,
                              cudaMemcpyHostToDevice, stream()));
  PARPAT_CUDA(cudaStreamSynchronize(stream()));
}

void CudaDevice::download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) {
  activate();
  PARPAT_CUDA(cudaMemcpyAsync(dst, static_cast<const char*>(handle) + offset, bytes,
                              cudaMemcpyDeviceToHost, stream()));
  PARPAT_CUDA(cudaStreamSynchronize(stream()));
}

void CudaDevice::synchronize() {
  activate();
  PARPAT_CUDA(cudaStreamSynchronize(stream()));
}

namespace {

// The calling thread's timing events, one pair per device it has timed on (created on first use,
// destroyed when the thread ends).
struct ThreadTimer {
  cudaEvent_t start = nullptr, stop = nullptr;
  bool holding = false;
};
struct ThreadTimers {
  std::map<int, ThreadTimer> by_ordinal;
  ~ThreadTimers() {
    for (auto& [ordinal, t] : by_ordinal) {
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
  }
};
thread_local ThreadTimers thread_timers;

}  // namespace

void CudaDevice::timer_start(TimerMode mode) {
  activate();
  ThreadTimer& t = thread_timers.by_ordinal[ordinal_];
  if (!t.start) {
    PARPAT_CUDA(cudaEventCreate(&t.start));
    PARPAT_CUDA(cudaEventCreate(&t.stop));
  }
  t.holding = mode == TimerMode::hold_queue;
  if (t.holding) {
    *release_flag_ = 0;
    block_stream<<<1, 1, 0, stream_>>>(release_flag_device_);
    check_launch("block_stream");
  }
  PARPAT_CUDA(cudaEventRecord(t.start, stream()));
}

double CudaDevice::timer_stop_ms() {
  auto it = thread_timers.by_ordinal.find(ordinal_);
  if (it == thread_timers.by_ordinal.end()) return 0;
  ThreadTimer& t = it->second;
  PARPAT_CUDA(cudaEventRecord(t.stop, stream()));
  if (t.holding) *release_flag_ = 1;
  t.holding = false;
  PARPAT_CUDA(cudaEventSynchronize(t.stop));
  float ms = 0;
  PARPAT_CUDA(cudaEventElapsedTime(&ms, t.start, t.stop));
  return ms;
}

// Thread-local capture: calls of other threads (another device's work) are not affected, and
// anything this thread does that cannot be captured (a synchronisation, a blocking copy) fails
// the capture with an error instead of running.
bool CudaDevice::capture_begin() {
  activate();
  PARPAT_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  return true;
}

void CudaDevice::capture_end() {
  cudaGraph_t graph = nullptr;
  PARPAT_CUDA(cudaStreamEndCapture(stream_, &graph));
  if (graph_) {
    PARPAT_CUDA(cudaGraphExecDestroy(graph_));
    graph_ = nullptr;
  }
  cudaError_t status = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  PARPAT_CUDA(status);
  // Upload now, so the first timed replay does not pay for it.
  PARPAT_CUDA(cudaGraphUpload(graph_, stream_));
  PARPAT_CUDA(cudaStreamSynchronize(stream_));
}

void CudaDevice::replay() {
  if (!graph_) throw Error(ErrorKind::invalid_argument, "no captured graph to replay");
  PARPAT_CUDA(cudaGraphLaunch(graph_, stream_));
}

std::vector<DeviceInfo> discover_cuda() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: the backend simply has no devices
    return {};
  }
  std::vector<DeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess) out.push_back(describe(i, p));
  }
  return out;
}

const DeviceInfo& cuda_device_info(int ordinal) {
  static const std::vector<DeviceInfo> devices = discover_cuda();  // properties are slow to query
  for (const DeviceInfo& d : devices)
    if (d.index == ordinal) return d;
  throw Error(ErrorKind::invalid_argument, "CUDA device " + std::to_string(ordinal) +
                                               " is not one parpat found (" +
                                               std::to_string(devices.size()) + " found)");
}

std::shared_ptr<DeviceImpl> open_cuda(int index) {
  return std::make_shared<CudaDevice>(index);
}

}  // namespace parpat::detail
