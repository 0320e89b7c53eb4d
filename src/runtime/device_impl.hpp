// The interface every backend implements once; patterns reach their backend's concrete type
// (CpuDevice, CudaDevice, OpenclDevice) through backend_cast.
#pragma once

#include <cstddef>
#include <memory>

#include "parpat/device.hpp"
#include "parpat/error.hpp"
#include "runtime/strided_gather.hpp"

namespace parpat::detail {

enum class TimerMode { hold_queue, events_only };

// A point in a queue's work (a CUDA event, an OpenCL event); null is the point before all work.
using Fence = std::shared_ptr<void>;

// Uploads beside the calling thread's stream, to overlap its kernels (a stream's chunks): on
// CUDA a second stream, whose copies wait on the device for fences of the first; on OpenCL the
// device's own queue (see opencl_copy_queue.cpp). Work that reads an upload is enqueued after
// wait() on it has returned.
class CopyQueue {
 public:
  virtual ~CopyQueue() = default;
  // Enqueues, on the copy queue, a wait for `after` and then the copy of `bytes` of host memory
  // from allocate_host() to device memory `handle`; returns the fence of the copy's end. `src`
  // must stay untouched until wait() on that fence has returned.
  virtual Fence upload(void* handle, const void* src, std::size_t bytes, const Fence& after) = 0;
  // A fence past the work enqueued so far on the calling thread's stream (a backend may wait for
  // that work on the host instead and return null).
  virtual Fence mark_stream() = 0;
  // The host waits for the copy of `fence` (from upload()) to end; returns its device time in ms.
  virtual double wait(const Fence& fence) = 0;
};

class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual const DeviceInfo& info() const = 0;

  // Device memory; the handle is a host pointer, a CUDA device pointer or a cl_mem.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* handle) noexcept = 0;
  virtual void upload(void* handle, std::size_t offset, const void* src, std::size_t bytes) = 0;
  virtual void download(const void* handle, std::size_t offset, void* dst, std::size_t bytes) = 0;
  virtual void synchronize() = 0;  // waits for the calling thread's current stream or queue

  // Host memory this backend copies to and from at full speed: page-locked on CUDA, a mapped
  // CL_MEM_ALLOC_HOST_PTR buffer on OpenCL, 64-byte aligned memory on the CPU. Streams stage
  // their chunks in it; upload() and download() take it like any host pointer.
  virtual void* allocate_host(std::size_t bytes) = 0;
  virtual void release_host(void* host) noexcept = 0;

  // Makes the calling thread's work on this device go to the caller's stream or queue (null:
  // the device's own) and returns the one it replaces; StreamScope is the way to use it.
  virtual void* use_stream(void* native) {
    if (native) throw Error(ErrorKind::invalid_argument, info().name + " takes no stream");
    return nullptr;
  }

  // Device time of the work the calling thread enqueues between timer_start() and
  // timer_stop_ms(); the stop waits for that work to finish. The timer's state belongs to the
  // calling thread, so threads that share a device may time their own calls (on a shared stream
  // or queue, one thread's time may include another's work that ran in between).
  // hold_queue (the benchmarks, one thread): CUDA holds the stream behind a blocking kernel
  // until timer_stop_ms() (for at most 20 ms), so the events time the device alone; nothing in
  // between may wait for the device, or the measurement includes host time. events_only (a call
  // asked to time itself): the events alone, the host's launch time included.
  virtual void timer_start(TimerMode mode = TimerMode::hold_queue) = 0;
  virtual double timer_stop_ms() = 0;

  // The copy of the strided view `layout` of items of `item_bytes` into dense C order
  // (strided_gather.hpp); Error(invalid_argument) for an item width other than 1, 2, 4 or 8.
  virtual std::unique_ptr<Gather> make_gather(const GatherLayout& layout,
                                              std::size_t item_bytes) = 0;

  // The copy queue of this device, or null where kernels read host memory (the CPU).
  virtual std::unique_ptr<CopyQueue> make_copy_queue() { return nullptr; }

  // Graph capture of the device's queue, for timing short launches without the gaps between
  // them: the work enqueued between capture_begin() and capture_end() is recorded, not run, and
  // each replay() enqueues all of it again as one graph. Only allocation-free, host-sync-free
  // work can be captured. Backends without graphs return false from capture_begin().
  virtual bool capture_begin() { return false; }
  virtual void capture_end() {}
  virtual void replay() {}
};

// For its lifetime, the calling thread's work on `device` goes to `stream` (a plan's run()).
class StreamScope {
 public:
  StreamScope(DeviceImpl& device, Stream stream)
      : device_(device), active_(stream.native != nullptr) {
    if (active_) previous_ = device_.use_stream(stream.native);
  }
  ~StreamScope() {
    if (active_) device_.use_stream(previous_);
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  DeviceImpl& device_;
  bool active_;
  void* previous_ = nullptr;
};

template <class Concrete>
Concrete& backend_cast(const Device& device) {
  auto* p = dynamic_cast<Concrete*>(&device.impl());
  if (!p) throw Error(ErrorKind::invalid_argument, "device is of another backend");
  return *p;
}

}  // namespace parpat::detail
