// Which engine joins the ranks of one process: NCCL when every rank is a distinct CUDA device and
// NCCL loads (nccl_communicator.cpp), the threads' rendezvous otherwise.
#include <iostream>
#include <set>

#include "distributed/agreement.hpp"
#include "parpat/communicator.hpp"
#include "parpat/device.hpp"
#include "parpat/error.hpp"
#include "runtime/backends.hpp"

namespace parpat {

#ifndef PARPAT_HAVE_NCCL
namespace {
[[noreturn]] void no_nccl() {
  throw Error(ErrorKind::unsupported,
              "this parpat was built without NCCL (it needs the CUDA backend and nccl.h)", "nccl");
}
}  // namespace

std::vector<std::shared_ptr<Communicator>> nccl_communicators(const std::vector<Device>&, double) {
  no_nccl();
}

std::shared_ptr<Communicator> nccl_communicator(const Device&,
                                                std::shared_ptr<Communicator> bootstrap, double) {
  if (!bootstrap) throw_invalid("an NCCL rank needs a bootstrap communicator");
  // Still a collective of `bootstrap`'s ranks, so that every rank stops alike.
  detail::step_then_agree(*bootstrap, [] { no_nccl(); });
  no_nccl();
}

std::shared_ptr<Communicator> rank_communicator(const Device&,
                                                std::shared_ptr<Communicator> bootstrap, double) {
  if (!bootstrap) throw_invalid("a rank needs a bootstrap communicator");
  return bootstrap;
}
#endif

std::vector<std::shared_ptr<Communicator>> device_communicators(const std::vector<Device>& devices,
                                                                double timeout_seconds) {
  std::set<int> cuda_indices;
  for (const Device& d : devices)
    if (d.backend() == Backend::cuda) cuda_indices.insert(d.info().index);
  if (!devices.empty() && cuda_indices.size() == devices.size()) {
    try {
      return nccl_communicators(devices, timeout_seconds);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;
      if (detail::verbose())
        std::cerr << "[parpat] ranks over threads, not NCCL: " << e.what() << "\n";
    }
  }
  return thread_communicators(static_cast<int>(devices.size()), timeout_seconds);
}

}  // namespace parpat
