// How reduce and histogram run over several ranks: as one rank of an MPI job (started by
// mpirun: each process reads its share on its own device), or as one rank per device of
// --devices (threads of this process). Rank 0 prints the answer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "parpat/communicator.hpp"

namespace parpat::cli {

// One rank's input, device and communicator (null when the command runs alone).
struct RankInput {
  std::optional<OpenedInput> opened;
  Communicator* comm = nullptr;
  // Whether this rank reports the answer (rank 0, or the command alone).
  bool reports() const { return !comm || comm->rank() == 0; }
};

// How many ranks computed an answer, on which engine: for the answer's text and JSON.
struct RankSummary {
  int ranks = 1;
  std::string engine;  // "mpi", "nccl", "threads"; empty alone

  explicit RankSummary(const RankInput& in)
      : ranks(in.comm ? in.comm->size() : 1), engine(in.comm ? in.comm->engine() : "") {}
  // " over 2 ranks (mpi)", or nothing alone.
  std::string text() const;
  // "ranks" and "engine", when not alone.
  void add_to(nlohmann::json& j) const;
};

// --devices of the distributed commands.
struct RankFlags {
  std::string devices;  // "cuda:0,cuda:1", "cuda:all", "cpu,opencl:0"; empty: one device

  void add_to(CLI::App& app);
};

// Opens `file` and the rank's device on every rank and runs `step` there: at once when alone,
// once per device of --devices on threads, or as this process's rank under mpirun. A failure on
// any rank throws the same Error on every rank.
void for_each_rank(const CommonOptions& common, const RankFlags& flags, const std::string& file,
                   const std::function<void(RankInput&)>& step);

// for_each_rank with `work`'s answer on rank 0, which reports it (nullopt on the other ranks of
// an MPI job).
template <class Answer, class Work>
std::optional<Answer> run_on_ranks(const CommonOptions& common, const RankFlags& flags,
                                   const std::string& file, Work&& work) {
  std::optional<Answer> answer;
  for_each_rank(common, flags, file, [&](RankInput& in) {
    Answer a = work(in);
    if (in.reports()) answer = std::move(a);
  });
  return answer;
}

// The MPI job this process is a rank of, started by an MPI launcher with more than one rank
// (its environment says so), through the MPI plugin beside the binary; null otherwise. Throws
// when the launcher started several ranks and this build has no MPI plugin.
std::shared_ptr<Communicator> mpi_world();
// Whether this process is an MPI rank other than 0 (which prints nothing, errors included, when
// every rank has the same error to report).
bool secondary_rank();
// Before the process exits with `status`: ends MPI when it was started (MPI_Abort when a rank
// gave up waiting in a collective, which cannot be finished).
void finish_ranks(int status, bool collective_timed_out);

}  // namespace parpat::cli
