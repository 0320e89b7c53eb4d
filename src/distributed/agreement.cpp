// The agreement record every rank contributes: a flag, the error kind, the call's signature and
// the error's message, cut to fit a fixed size (all_gather takes equal sizes).
#include "distributed/agreement.hpp"

#include <algorithm>
#include <cstring>

#include "parpat/distributed.hpp"
#include "parpat/error.hpp"

namespace parpat {

namespace detail {

namespace {

struct Record {
  std::uint64_t signature = 0;
  std::uint8_t failed = 0;
  std::uint8_t kind = 0;
  char message[502] = {};
};
static_assert(sizeof(Record) == 512);

Record record_of(std::exception_ptr failed, std::uint64_t signature) {
  Record r;
  r.signature = signature;
  if (!failed) return r;
  r.failed = 1;
  std::string text;
  ErrorKind kind = ErrorKind::backend;
  try {
    std::rethrow_exception(failed);
  } catch (const Error& e) {
    kind = e.kind();
    text = e.what();
  } catch (const std::exception& e) {
    text = e.what();
  } catch (...) {
    text = "unknown error";
  }
  r.kind = static_cast<std::uint8_t>(kind);
  std::memcpy(r.message, text.data(), std::min(text.size(), sizeof r.message - 1));
  return r;
}

}  // namespace

void agree(Communicator& comm, std::exception_ptr failed, std::uint64_t signature) {
  Record mine = record_of(failed, signature);
  std::vector<Record> all(static_cast<std::size_t>(comm.size()));
  comm.all_gather(&mine, sizeof mine, all.data());
  for (const Record& r : all)
    if (r.failed)
      throw Error(static_cast<ErrorKind>(r.kind),
                  std::string(r.message, strnlen(r.message, sizeof r.message)), {}, "collective");
  for (std::size_t k = 1; k < all.size(); ++k)
    if (all[k].signature != all[0].signature)
      throw Error(ErrorKind::invalid_argument,
                  "rank " + std::to_string(k) +
                      " was given another call than rank 0 (the op, axis, bins, variant, or the "
                      "input's dtype or shape differ)",
                  {}, "collective");
}

std::uint64_t signature_of(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string source_signature(const SourceImpl& source) {
  std::string text = dtype_name(source.dtype);
  for (auto d : source.shape)
    text += ' ' + std::to_string(d);
  return text;
}

}  // namespace detail

void on_every_rank(Communicator& comm, const std::function<void()>& step) {
  detail::step_then_agree(comm, step);
}

}  // namespace parpat
