// Helpers of the distributed tests: thread ranks, and the checks that every rank failed alike.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "parpat/communicator.hpp"
#include "parpat/error.hpp"

namespace parpat::test {

// Runs `body(comm)` on `size` threads, one rank each, and returns each rank's exception.
inline std::vector<std::exception_ptr> on_ranks(int size,
                                                const std::function<void(Communicator&)>& body,
                                                double timeout = 120) {
  auto comms = thread_communicators(size, timeout);
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        body(*comms[static_cast<std::size_t>(r)]);
      } catch (...) {
        failed[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads)
    t.join();
  return failed;
}

// The message of `e`'s Error and its kind; fails the test for anything else.
inline std::pair<std::string, ErrorKind> error_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return {err.what(), err.kind()};
  } catch (...) {
    ADD_FAILURE() << "not a parpat::Error";
  }
  return {};
}

inline void expect_every_rank_failed_alike(const std::vector<std::exception_ptr>& failed,
                                           const std::string& part) {
  ASSERT_TRUE(failed[0]) << "rank 0 did not fail";
  const auto first = error_of(failed[0]);
  EXPECT_NE(first.first.find(part), std::string::npos) << first.first;
  for (std::size_t r = 1; r < failed.size(); ++r) {
    ASSERT_TRUE(failed[r]) << "rank " << r << " did not fail";
    EXPECT_EQ(error_of(failed[r]), first) << "rank " << r;
  }
}

}  // namespace parpat::test
