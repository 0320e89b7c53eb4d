// One reduction as Python calls it in a loop: a device, dtype, shape, strides and options
// (numpy's axes, or none for all), and where the input and output live. The package makes one
// per call signature and keeps it, so that a call costs a map lookup and a launch. It holds a
// Reducer (and the device scratch for the values of an arg op) per (thread, stream): plans are used
// by one thread at a time, and calls on one stream are ordered, so they may share a plan's
// workspace.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "memory.hpp"
#include "parpat/parpat.hpp"

namespace parpat::python {

class ReduceCall {
 public:
  static constexpr std::size_t kMaxPlans = 16;

  ReduceCall(Device device, bool host, const std::string& dtype, std::vector<std::int64_t> shape,
             std::vector<std::int64_t> strides, const std::string& op,
             std::optional<std::vector<int>> axes, const std::string& variant, double ddof,
             std::uintptr_t first_stream)
      : device_(std::move(device)),
        host_(host),
        dtype_(parse_dtype(dtype)),
        shape_(std::move(shape)),
        strides_(std::move(strides)) {
    options_.op = parse_reduce_op(op);
    options_.axes = std::move(axes);
    options_.variant = variant;
    options_.ddof = ddof;
    // The first call's plan now, so that a bad dtype, shape or variant is refused before any
    // launch.
    plan_for(run_stream(device_, host_, first_stream));
  }

  // Whether run() waits for the work (host memory, or the CPU backend) rather than enqueue it.
  bool waits() const { return host_ || device_.backend() == Backend::cpu; }

  // Reduces the array at `in` into the outputs at `out` (the result values, or for arg ops the
  // int64 indices) on `stream`.
  void run(std::uintptr_t in, std::uintptr_t out, std::uintptr_t stream) {
    const Stream s = run_stream(device_, host_, stream);
    const std::shared_ptr<PerStream> held = plan_for(s);
    PerStream& p = *held;
    const auto outputs = static_cast<std::size_t>(p.plan.outputs());
    Array x = input_array(device_, {in, host_}, dtype_, shape_, strides_);
    const bool arg = is_arg_op(options_.op);
    Output idx(device_, arg ? Memory{out, host_} : Memory{},
               arg ? outputs * sizeof(std::int64_t) : 0);
    Output val(device_, arg ? Memory{} : Memory{out, host_},
               arg ? 0 : outputs * dtype_size(p.plan.result_dtype()));
    p.plan.run(x, arg ? p.scratch : val.buffer(), idx.buffer(), s);
    val.finish();
    idx.finish();
  }

 private:
  struct PerStream {
    Reducer plan;
    Buffer scratch;  // the values of an arg op, which nobody reads back
  };

  std::shared_ptr<PerStream> plan_for(Stream s) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(std::this_thread::get_id(), s.native);
    auto found = plans_.find(key);
    if (found != plans_.end()) return found->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    Reducer plan(device_, dtype_, shape_, strides_, options_);
    Buffer scratch;
    if (is_arg_op(options_.op))
      scratch = Buffer(device_,
                       static_cast<std::size_t>(plan.outputs()) * dtype_size(plan.result_dtype()));
    auto made = std::make_shared<PerStream>(PerStream{std::move(plan), std::move(scratch)});
    return plans_.emplace(key, std::move(made)).first->second;
  }

  Device device_;
  bool host_;
  DType dtype_;
  std::vector<std::int64_t> shape_;
  std::vector<std::int64_t> strides_;  // in elements, one per axis
  ReduceOptions options_;
  std::mutex mutex_;
  // Shared with the calls running them, so that dropping plans when the map is full (threads
  // come and go) never frees one in use.
  std::map<std::pair<std::thread::id, void*>, std::shared_ptr<PerStream>> plans_;
};

}  // namespace parpat::python
