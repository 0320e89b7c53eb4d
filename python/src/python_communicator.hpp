// A Communicator whose collectives a Python object carries out (parpat._mpi's adapter of an
// mpi4py communicator): rank and size are read once; all_gather and all_reduce_sum take the GIL
// and call the object's methods of those names. The object bounds its own waits; a Python
// exception there (a timeout, an MPI error) becomes parpat's Error with its message.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "parpat/parpat.hpp"

namespace parpat::python {

namespace nb = nanobind;

class PythonCommunicator final : public Communicator {
 public:
  explicit PythonCommunicator(nb::object adapter)
      : adapter_(std::move(adapter)),
        rank_(nb::cast<int>(adapter_.attr("rank"))),
        size_(nb::cast<int>(adapter_.attr("size"))),
        engine_(nb::cast<std::string>(adapter_.attr("engine"))) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string engine() const override { return engine_; }

  void all_gather(const void* data, std::size_t bytes, void* out) override {
    nb::gil_scoped_acquire gil;
    try {
      nb::bytes all = nb::cast<nb::bytes>(
          adapter_.attr("all_gather")(nb::bytes(static_cast<const char*>(data), bytes)));
      if (all.size() != bytes * static_cast<std::size_t>(size_))
        throw Error(ErrorKind::backend, "all_gather returned " + std::to_string(all.size()) +
                                            " bytes, not " + std::to_string(bytes * size_));
      std::memcpy(out, all.c_str(), all.size());
    } catch (nb::python_error& e) {
      throw Error(ErrorKind::backend, e.what(), engine_, "all_gather");
    }
  }

  void all_reduce_sum(std::uint64_t* values, std::size_t count) override {
    nb::gil_scoped_acquire gil;
    try {
      // A numpy view of `values` (no copy), summed over the ranks in place.
      const nb::ndarray<nb::numpy, std::uint64_t, nb::ndim<1>> view(values, {count}, nb::handle());
      adapter_.attr("all_reduce_sum")(nb::cast(view, nb::rv_policy::reference));
    } catch (nb::python_error& e) {
      throw Error(ErrorKind::backend, e.what(), engine_, "all_reduce_sum");
    }
  }
  using Communicator::all_gather;

 private:
  nb::object adapter_;
  int rank_, size_;
  std::string engine_;
};

}  // namespace parpat::python
